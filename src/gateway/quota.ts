// Exact daily quotas without a store round trip per request: each process leases units of a key's daily quota from
// the shared store and admits requests from its lease; leases shrink as the key nears its limit, down to one unit per
// request at the end. docs/quota.md tells the same story for operators.
//
// Exactness (never over-admits): a request is admitted only by spending one unit of a lease, and every lease came from
// store.take(), which is atomic across all processes sharing the store and never lets a (key, day)'s total granted
// pass the limit. So, summed over every process that ever shared the store, admissions <= units granted <= limit.
// Within a process, spending a unit is a synchronous decrement on the one JavaScript thread.
//
// Lease size: a process's first take for a (key, day) asks for 1 unit and learns the day's total granted so far (G).
// Each later take asks for clamp(floor((limit - G) / 8), 1, maxLease) units, G being the total seen at its previous
// take: with the default limit 1000 (maxLease 100), takes of 1, 100 and 100 (201 granted), then 1/8 of what is left
// (99, 87, 76, ...), and one unit per request for the last 15. A process has at most one take in flight per key;
// requests that find the lease empty wait for that take instead of issuing their own.
//
// Bursts bigger than a lease, near the limit (see "far" below): when a take's units arrive to more waiting requests
// than it got (demand outran the lease, as in a burst of hundreds), the next take asks for no more units than there
// are requests waiting for it. Every unit of that lease is spent the moment it arrives, so at the end of a burst no
// units sit in one process while another, told by the store that nothing is left, refuses its own waiting requests:
// two processes sharing a burst admit the limit between them. Traffic that a lease keeps up with (one request at a
// time, or a few at once) keeps the sizes above, so it does not pay a store call per request; the price is that a
// process whose share of a key's traffic stops can be left holding part of a lease (the bound below).
//
// Far from the limit (at least 16 full leases left in the day, as this process last saw the day's count), a process
// whose lease is down to a quarter starts the next take in the background, so steady traffic does not wait for a
// store round trip (on Redis it would otherwise hold every request of a busy key that arrives meanwhile; SQLite runs
// the take inline either way). A take tops the lease up to maxLease, no more: what a process holds, in hand and in
// flight, stays <= maxLease, so the bounds below hold as they are. The burst rule above applies only near the limit,
// where units one process holds are units another may need; far from it, capping takes to the waiting requests
// would keep a key with steady arrivals over a slow store taking a few units per round trip forever. After a
// background take fails, the next one waits until a take succeeds again, so a failing store is not called by every
// request of the last quarter of a lease. Limits up to 1,600 (the default 1,000 among them) are never far.
//
// Under-admission bound: units sit in a lease until they are spent. close() hands unspent units back to the store,
// so a clean shutdown loses nothing. A process that dies (SIGKILL, crash, power loss) loses its unspent units for the
// rest of that UTC day, plus the units of a take whose answer it never received: at most its current lease, which is
// <= max(1, floor(R / 8)) <= maxLease units per key, R being the remaining count it saw at its previous take for that
// key (its first take is 1 unit). So each dead process costs each key it was serving at most maxLease units of that
// day (100; a thousandth of the limit above 100,000), and at most ~1/8 of the remainder once the key is past
// limit - 8 * maxLease (200 of 1000). A key also loses the units leased by processes that are alive but no longer see
// its requests, until they close.
//
// remaining (RateLimit-Remaining): limit - (units granted in the store, as of this process's last take) + (units this
// process still holds) + (units it refunded to the store since). On a single instance that is exactly limit - requests
// admitted today. With several instances
// it is this instance's view: other instances' unspent leases count as used, and their takes since this instance's
// last one are not yet seen.
//
// The day is the UTC date of `now()`; at 00:00 UTC every key starts a fresh lease against a fresh counter.
import type { QuotaStore } from './stores/types.js';

export interface QuotaOptions {
  /** Requests per key per UTC day. Default 1000. */
  limit?: number;
  /**
   * Largest lease taken at once, in units; also the most a crashed process can lose per key per day. Default 100, or a
   * thousandth of the limit when that is more (limits above 100,000): a raised quota for a busy client then costs the
   * store a take per 0.1% of the day's quota, not one per 100 requests, and a crash at most 0.1% of it.
   */
  maxLease?: number;
  /**
   * After the store has no units left for a key, refuse locally for this long (ms) before asking again: units handed
   * back by an instance that shut down cleanly are picked up after at most this delay. Default 1000.
   */
  exhaustedRecheckMs?: number;
  /**
   * How long a request waits for a take before it fails (503), in ms. Default 2000. The take itself goes on: no other
   * take of that key starts until it has an answer, and its units go into the lease when it comes (a store that
   * stalls costs waiting requests, not units). Requests that find a take older than this fail at once.
   */
  takeWaitMs?: number;
  now?: () => number;
}

export interface Admission {
  ok: boolean;
  limit: number;
  /** Requests still allowed today after this one, as this process knows it (see the top of this file). */
  remaining: number;
  /** Seconds until 00:00 UTC, when the quota resets; 1 to 86400. */
  resetSeconds: number;
  /** The UTC day it was counted in, 'YYYY-MM-DD' (see refund). */
  day: string;
}

interface Lease {
  day: string;
  /** Units held by this process and not yet spent. */
  units: number;
  /** The day's total granted in the store as of this process's last take; -1 before the first. */
  granted: number;
  /** When a take last came back empty; -Infinity if never. */
  exhaustedAt: number;
  /** The take in flight for this key, if any; resolves to the units it got. */
  refill: Promise<number> | null;
  /** When that take started (performance.now()). */
  refillStarted: number;
  /** admit() calls for this key waiting for a take (none of them holds a unit). */
  waiting: number;
  /** Whether the previous take's units arrived to more waiting requests than it got: a burst bigger than a lease. */
  short: boolean;
  /** Whether a background take failed since the last take that succeeded: no more background takes until one does. */
  aheadFailed: boolean;
  /** Units refunded to the store that `granted` does not reflect yet (see refund). */
  released: number;
  /** Counts the takes started, so a release knows whether a later take's `granted` already saw it. */
  takeEpoch: number;
}

const DAY_MS = 86_400_000;
/** Refill ahead only while at least this many full leases are left in the key's day (see the top of this file). */
const AHEAD_LEASES = 16;

/** The UTC day of an instant, 'YYYY-MM-DD'. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Whole seconds (rounded up) from an instant to the next 00:00 UTC: 1 to 86400. */
export function secondsToUtcMidnight(ms: number): number {
  return Math.ceil((Math.floor(ms / DAY_MS + 1) * DAY_MS - ms) / 1000);
}

export class QuotaLimiter {
  readonly limit: number;
  readonly maxLease: number;
  private readonly exhaustedRecheckMs: number;
  private readonly takeWaitMs: number;
  /** A lease down to this many units is refilled ahead, when the key is at least aheadFrom units from its limit. */
  private readonly refillAt: number;
  private readonly aheadFrom: number;
  private readonly now: () => number;
  private readonly leases = new Map<string, Lease>();
  private day = '';
  private dayStart = 0;
  private dayEnd = 0;
  private closed = false;
  private takeCount = 0;

  /** The store stays the caller's: close() does not close it. */
  constructor(
    private readonly store: QuotaStore,
    opts: QuotaOptions = {},
  ) {
    this.limit = opts.limit ?? 1000;
    this.maxLease = opts.maxLease ?? Math.max(100, Math.floor(this.limit / 1000));
    this.exhaustedRecheckMs = opts.exhaustedRecheckMs ?? 1000;
    this.takeWaitMs = opts.takeWaitMs ?? 2000;
    this.now = opts.now ?? Date.now;
    this.refillAt = Math.floor(this.maxLease / 4);
    this.aheadFrom = AHEAD_LEASES * this.maxLease;
    if (!Number.isSafeInteger(this.limit) || this.limit < 0)
      throw new RangeError(`quota limit must be a non-negative integer, got ${this.limit}`);
    if (!Number.isSafeInteger(this.maxLease) || this.maxLease < 1)
      throw new RangeError(`maxLease must be a positive integer, got ${this.maxLease}`);
  }

  /** How many store.take() calls this limiter has made: how often the request path reached the store. */
  get takes(): number {
    return this.takeCount;
  }

  /**
   * Spends one unit of the key's quota for today if there is one. Resolves ok: false once the day's limit is reached
   * (the request must not be served, and is not counted). Rejects if the store fails or the limiter is closed: the
   * request must then be refused too (fail closed).
   */
  admit(keyId: string): Admission | Promise<Admission> {
    // Between takes the answer is local and the request path stays synchronous.
    return this.local(keyId) ?? this.admitFromStore(keyId);
  }

  private async admitFromStore(keyId: string): Promise<Admission> {
    for (;;) {
      const local = this.local(keyId);
      if (local !== undefined) return local;
      if (this.closed) throw new Error('QuotaLimiter is closed: no more requests can be admitted.');
      const lease = this.leaseFor(keyId, this.now());
      if (lease.refill !== null && performance.now() - lease.refillStarted >= this.takeWaitMs) throw this.overdue();
      lease.waiting++;
      let got: number;
      try {
        lease.refill ??= this.refill(keyId, lease);
        got = await this.within(lease.refill, lease.refillStarted);
      } finally {
        lease.waiting--;
      }
      // Nothing left today (unless the day turned while waiting: then try the new day's quota).
      if (got === 0 && this.leases.get(keyId) === lease)
        return {
          ok: false,
          limit: this.limit,
          remaining: 0,
          resetSeconds: secondsToUtcMidnight(this.now()),
          day: lease.day,
        };
      // Units arrived: spend one if the other waiters have left any, else take again.
    }
  }

  /**
   * The answer when it is local: a unit of the lease spent, or a refusal while the store is known to be empty.
   * Undefined when only the store can tell.
   */
  private local(keyId: string): Admission | undefined {
    const t = this.now();
    const lease = this.leaseFor(keyId, t);
    if (lease.units > 0) {
      lease.units--;
      if (
        lease.units <= this.refillAt &&
        lease.refill === null &&
        !lease.aheadFailed &&
        this.far(lease) &&
        !this.closed
      ) {
        // No request waits for this take unless the lease runs dry first; such requests fail with it (503), as with
        // any take. The store's error reaches them, and the log, that way; here it only stops further background takes.
        (lease.refill = this.refill(keyId, lease)).catch(() => {
          lease.aheadFailed = true;
        });
      }
      return {
        ok: true,
        limit: this.limit,
        remaining: this.remaining(lease),
        resetSeconds: Math.ceil((this.dayEnd - t) / 1000),
        day: lease.day,
      };
    }
    if (t - lease.exhaustedAt < this.exhaustedRecheckMs)
      return {
        ok: false,
        limit: this.limit,
        remaining: 0,
        resetSeconds: Math.ceil((this.dayEnd - t) / 1000),
        day: lease.day,
      };
    return undefined;
  }

  /**
   * Gives back the unit an admitted request spent when it could not be answered (a 503): such a request does not
   * count. Far from the limit the unit goes back into this process's lease. It goes to the store instead when the
   * lease is full or a take is in flight (what a process holds stays within maxLease: the bound at the top), and near
   * the limit, where a unit held here may be one another process needs. A unit of a day that is over is dropped.
   */
  refund(keyId: string, a: Admission): void {
    if (!a.ok || this.closed) return;
    const lease = this.leases.get(keyId);
    if (lease === undefined || lease.day !== a.day) return;
    if (lease.refill === null && lease.units < this.maxLease && this.far(lease)) {
      lease.units++;
      return;
    }
    // The unit is back in the store at once as far as this process's `remaining` goes, so the next RateLimit shows
    // it: a store answers its calls in order, so a take sent after this release counts it, one already sent does not.
    lease.released++;
    const epoch = lease.takeEpoch;
    this.store.release(keyId, a.day, 1).catch(() => {
      // Lost: the key is under-admitted by one, never over. Unless a take has answered since, stop counting it.
      if (lease.takeEpoch === epoch && lease.released > 0) lease.released--;
    });
  }

  /**
   * Stops admitting, waits for takes in flight, and hands every unspent unit back to the store, so a clean shutdown
   * loses no quota. (A crash cannot do this: see the bound at the top of this file.) Does not close the store.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Takes in flight are waited for as requests wait for them: one still unanswered then is lost with its units.
    await Promise.allSettled(
      [...this.leases.values()].map((l) => l.refill && this.within(l.refill, performance.now())),
    );
    const giveBack: Promise<void>[] = [];
    for (const [keyId, lease] of this.leases) {
      const units = lease.units;
      lease.units = 0;
      if (units > 0) giveBack.push(this.store.release(keyId, lease.day, units));
    }
    this.leases.clear();
    await Promise.all(giveBack);
  }

  private leaseFor(keyId: string, t: number): Lease {
    if (t < this.dayStart || t >= this.dayEnd) {
      // A new UTC day: yesterday's leases are worthless, today's start empty.
      this.dayStart = Math.floor(t / DAY_MS) * DAY_MS;
      this.dayEnd = this.dayStart + DAY_MS;
      this.day = utcDay(t);
      this.leases.clear();
    }
    let lease = this.leases.get(keyId);
    if (!lease) {
      lease = {
        day: this.day,
        units: 0,
        granted: -1,
        exhaustedAt: -Infinity,
        refill: null,
        refillStarted: 0,
        waiting: 0,
        short: false,
        aheadFailed: false,
        released: 0,
        takeEpoch: 0,
      };
      this.leases.set(keyId, lease);
    }
    return lease;
  }

  /** The take's answer, or the overdue error once takeWaitMs have passed since `started` (the take goes on). */
  private within(take: Promise<number>, started: number): Promise<number> {
    const left = this.takeWaitMs - (performance.now() - started);
    if (left <= 0) return Promise.reject(this.overdue());
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      take,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(this.overdue()), left);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  private overdue(): Error {
    return new Error(`the quota store has not answered a take within ${this.takeWaitMs} ms`);
  }

  private async refill(keyId: string, lease: Lease): Promise<number> {
    lease.refillStarted = performance.now();
    try {
      let want =
        lease.granted < 0 ? 1 : Math.min(this.maxLease, Math.max(1, Math.floor((this.limit - lease.granted) / 8)));
      // Near the limit, after a burst outran the previous lease, take only what the waiting requests will spend at once
      // (see the top). Every waiting request needs a unit: the lease is empty whenever waiting requests start a take.
      if (lease.short && !this.far(lease)) want = Math.min(want, lease.waiting);
      // Top the lease up, no more: a take started when the lease ran out finds it empty; one started ahead finds at most
      // refillAt units (and is only started while leases are full size, so want - units >= 1).
      else want -= lease.units;
      this.takeCount++;
      lease.takeEpoch++;
      // Releases sent before this take are in the total it answers with; those sent while it is in flight are not.
      const seen = lease.released;
      const { taken, granted } = await this.store.take(keyId, lease.day, want, this.limit);
      lease.short = lease.waiting > taken;
      lease.aheadFailed = false;
      lease.granted = granted;
      lease.released -= seen;
      lease.units += taken;
      if (taken === 0) lease.exhaustedAt = this.now();
      return taken;
    } finally {
      lease.refill = null;
    }
  }

  /** Whether the key is far from its limit, as this process last saw the day's count (see the top of this file). */
  private far(lease: Lease): boolean {
    return this.limit - lease.granted >= this.aheadFrom;
  }

  private remaining(lease: Lease): number {
    return Math.min(this.limit, Math.max(0, this.limit - lease.granted + lease.released + lease.units));
  }
}
