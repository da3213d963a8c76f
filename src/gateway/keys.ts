// API keys: made here, stored only as SHA-256 hashes, looked up through a small cache so the per-request path rarely
// reaches the store. Nothing in this module logs; callers that log a key use fingerprint(), never the key.
//
// A key is 'mp_' + 43 base64url characters (32 random bytes). Its public id is 'k_' + the first 8 hex digits of its
// hash, the same 8 digits as its fingerprint, so a log line's fingerprint points at one row of `modelpub keys list`
// without revealing anything usable about the key.
import { hash, randomBytes } from 'node:crypto';
import { UsageError } from '../errors.js';
import { DuplicateKeyError, type KeyRecord, type QuotaStore } from './stores/types.js';

const KEY_PREFIX = 'mp_';
const KEY_PATTERN = /^mp_[A-Za-z0-9_-]{43}$/;
const ID_PATTERN = /^k_[0-9a-f]{8}$/;
const MAX_LABEL = 200;

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** SHA-256 of the key, 64 lowercase hex digits: what the store keeps. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex'); // the one-shot form: no Hash object per request
}

/** A short, non-reversible name for a key in logs: the first 8 hex digits of its hash. */
export function fingerprint(key: string): string {
  return hashKey(key).slice(0, 8);
}

/** The public id of the key with this hash. */
export function keyIdFor(hash: string): string {
  return `k_${hash.slice(0, 8)}`;
}

/** Whether a string has the shape of a key this module makes; anything else is refused without a store lookup. */
export function isWellFormedKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/**
 * Makes a key, stores its record and returns both. The key itself is returned once, here, and stored nowhere: show it
 * to the operator and forget it.
 */
export async function createKey(
  store: QuotaStore,
  label: string,
  now: Date = new Date(),
): Promise<{ key: string; record: KeyRecord }> {
  if (label.length > MAX_LABEL)
    throw new UsageError(`A key label has at most ${MAX_LABEL} characters; this one has ${label.length}.`);
  if (/[\u0000-\u001f\u007f]/.test(label))
    throw new UsageError('A key label cannot contain control characters (newlines, tabs, ...).');
  // Ids are 32 bits of the hash: a clash is rare (about 1 in 4 million with 2,000 keys) and costs a new draw.
  for (let attempt = 0; ; attempt++) {
    const key = generateKey();
    const hash = hashKey(key);
    const record: KeyRecord = { id: keyIdFor(hash), hash, label, created_at: now.toISOString(), revoked_at: null };
    try {
      await store.createKey(record);
      return { key, record };
    } catch (e) {
      if (!(e instanceof DuplicateKeyError) || attempt >= 4) throw e;
    }
  }
}

/**
 * Revokes a key named by its id ('k_1a2b3c4d') or by the key itself ('mp_...'). Returns the record (revoked_at set;
 * the first revocation's time if it was already revoked), or null if no stored key matches. Gateways notice within
 * their KeyCache ttl (10 s by default).
 */
export async function revokeKey(store: QuotaStore, idOrKey: string, now: Date = new Date()): Promise<KeyRecord | null> {
  let id = idOrKey.trim();
  if (id.startsWith(KEY_PREFIX)) {
    const rec = await store.findKey(hashKey(id));
    if (!rec) return null;
    id = rec.id;
  } else if (!ID_PATTERN.test(id)) {
    throw new UsageError(
      `"${id}" is neither a key id (k_ and 8 hex digits, as \`modelpub keys list\` shows) nor a key (mp_...).`,
    );
  }
  return store.revokeKey(id, now.toISOString());
}

export interface KeyCacheOptions {
  /** How long a found key (valid or revoked) is trusted, in ms. Default 10,000: a revocation takes effect within it. */
  ttlMs?: number;
  /** How long "no such key" is trusted, in ms. Default 1,000: a new key works within it. */
  negativeTtlMs?: number;
  /** At most this many entries; the oldest go first. Default 10,000 (bounds memory under a flood of made-up keys). */
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  record: KeyRecord | null;
  until: number;
}

/**
 * Answers "which valid key is this?" for the request path. The store is asked by SHA-256 (it holds nothing else);
 * the answers are cached by the key as the client sent it, so a key seen in the last seconds costs one Map lookup:
 * no hash, no pattern test. The price: up to maxEntries raw keys stay in this process's memory (never on disk, never
 * logged): a key's entry goes when a later store lookup finds it expired at the oldest end, when it is pushed out,
 * or when it is looked up again after its ttl. A lookup by raw key is a hash-table probe whose timing depends on
 * V8's seeded string hash, not on a byte-by-byte comparison with stored keys.
 *
 * Freshness: a revoked key may keep working for up to ttlMs in each gateway process (10 s by default); a new key may
 * be refused for up to negativeTtlMs (1 s) if it was tried just before it was created.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<KeyRecord | null>>();
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly store: QuotaStore,
    opts: KeyCacheOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 10_000;
    this.negativeTtlMs = opts.negativeTtlMs ?? 1_000;
    this.maxEntries = Math.max(1, opts.maxEntries ?? 10_000);
    this.now = opts.now ?? Date.now;
  }

  /**
   * The record of a valid (stored, not revoked) key, or null: malformed, unknown or revoked. Store errors propagate
   * and are not cached.
   */
  lookup(key: string): KeyRecord | null | Promise<KeyRecord | null> {
    // A key seen in the last ttlMs is answered from memory: the request path stays synchronous.
    const known = this.cached(key);
    return known === undefined ? this.lookupInStore(key) : known;
  }

  private async lookupInStore(key: string): Promise<KeyRecord | null> {
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.fetch(key);
      this.inflight.set(key, pending);
    }
    const record = await pending;
    return record && !record.revoked_at ? record : null;
  }

  /** The answer when it is known from the cache (or from the key's shape); undefined when only the store can tell. */
  private cached(key: string): KeyRecord | null | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return isWellFormedKey(key) ? undefined : null;
    if (hit.until <= this.now()) return undefined;
    return hit.record && !hit.record.revoked_at ? hit.record : null;
  }

  /** Forgets everything (e.g. right after this process revoked a key). */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private async fetch(key: string): Promise<KeyRecord | null> {
    try {
      const record = await this.store.findKey(hashKey(key));
      this.entries.delete(key);
      this.sweep();
      while (this.entries.size >= this.maxEntries) this.evict();
      this.entries.set(key, { record, until: this.now() + (record ? this.ttlMs : this.negativeTtlMs) });
      return record;
    } finally {
      this.inflight.delete(key);
    }
  }

  /** Drops expired answers from the oldest end, so a key (raw, see above) is not kept long past its ttl. */
  private sweep(): void {
    const t = this.now();
    for (const [key, e] of this.entries) {
      if (e.until > t) break;
      this.entries.delete(key);
    }
  }

  /** Drops the oldest insertion: O(1), and with one ttl per kind of answer, close to the soonest to expire. */
  private evict(): void {
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }
}
