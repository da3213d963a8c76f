// The one interface every quota store driver implements (memory.ts, sqlite.ts, redis.ts), and the records they keep.
// Drivers hold API keys only as SHA-256 hashes and count quota units per key per UTC day; the policy (leases, limits,
// caching) lives in ../quota.ts and ../keys.ts, never in a driver.

/** An API key as stored: never the key itself, only its hash. */
export interface KeyRecord {
  /** Short public id, `k_` + the first 8 hex digits of the hash (see keys.ts): shown by `keys list`, used in logs. */
  id: string;
  /** SHA-256 of the key, 64 lowercase hex digits. */
  hash: string;
  label: string;
  /** ISO 8601 UTC. */
  created_at: string;
  /** ISO 8601 UTC, or null while the key is valid. */
  revoked_at: string | null;
}

/** What one take() did: the units it granted now, and the day's total granted for the key after it. */
export interface TakeResult {
  taken: number;
  granted: number;
}

export interface QuotaStore {
  /** The driver's DRIVER_NAME: 'memory', 'sqlite' or 'redis'. */
  readonly driver: string;
  /** What the operator should hear at start about how the store is set up (e.g. Redis without persistence). */
  readonly warnings?: readonly string[];

  /** Adds a key; throws if its id or hash is already stored. */
  createKey(rec: KeyRecord): Promise<void>;
  /** The record with this hash, revoked or not; null if none. */
  findKey(hash: string): Promise<KeyRecord | null>;
  /** Every record, revoked ones included, oldest first (ties by id). */
  listKeys(): Promise<KeyRecord[]>;
  /**
   * Marks the key with this id revoked and returns its record; null if there is no such id. Revoking twice keeps the
   * first revoked_at.
   */
  revokeKey(id: string, at: string): Promise<KeyRecord | null>;

  /**
   * Atomically grants min(want, limit - granted) units (never negative) of the key's quota for `day` ('YYYY-MM-DD',
   * UTC) and returns them with the new total. Atomic across every process sharing the store: the sum of everything
   * ever taken for a (key, day) never exceeds `limit`.
   */
  take(keyId: string, day: string, want: number, limit: number): Promise<TakeResult>;
  /**
   * Hands back units that were taken but will never be used (a limiter closing cleanly). The total never drops below
   * zero. Only the process that took the units may give them back, and only once it can no longer use them.
   */
  release(keyId: string, day: string, units: number): Promise<void>;
  /** Units granted so far for the key on `day`; 0 if none. */
  granted(keyId: string, day: string): Promise<number>;
  /**
   * Resolves when the store answers and still holds what this process saw in it (GET /healthz); rejects with why
   * not (out of reach, its data lost, the SQLite file deleted).
   */
  ping(): Promise<void>;

  close(): Promise<void>;
}

/**
 * The store no longer holds what this process saw in it (Redis restarted without its data, a SQLite file deleted):
 * counters of the day may be gone with what was already admitted, so every take fails until an operator has looked.
 */
export class StoreDataLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreDataLostError';
  }
}

/** Thrown by createKey when the id or hash is taken: keys.ts then draws a new key. */
export class DuplicateKeyError extends Error {
  constructor(readonly id: string) {
    super(`A key with id ${id} (or the same hash) is already stored.`);
    this.name = 'DuplicateKeyError';
  }
}

/** Input checks shared by every driver, so they all refuse the same nonsense the same way. */
export function checkTake(want: number, limit: number): void {
  if (!Number.isSafeInteger(want) || want < 1)
    throw new RangeError(`take(): want must be a positive integer, got ${want}`);
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw new RangeError(`take(): limit must be a non-negative integer, got ${limit}`);
}

export function checkUnits(units: number): void {
  if (!Number.isSafeInteger(units) || units < 0)
    throw new RangeError(`release(): units must be a non-negative integer, got ${units}`);
}

export function checkDay(day: string): void {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new RangeError(`day must be YYYY-MM-DD, got ${JSON.stringify(day)}`);
}

/** The UTC day before `day`, as 'YYYY-MM-DD'. */
export function previousDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}
