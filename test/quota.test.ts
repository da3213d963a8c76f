// QuotaLimiter: lease sizes, day boundary, Remaining, clean close, failures; exactness in one process for every store;
// exactness across two processes sharing a SQLite file or a Redis; and what a SIGKILLed process can cost.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuotaLimiter, secondsToUtcMidnight, utcDay, type Admission } from '../src/gateway/quota.js';
import { openStore } from '../src/gateway/stores/index.js';
import { memoryStore } from '../src/gateway/stores/memory.js';
import { compileWorker, startWorker, type CompiledWorker } from './helpers/quota-worker.js';
import { REDIS_MISSING, redisServerPath, startRedis, type RedisServer } from './helpers/redis.js';

const T0 = Date.UTC(2025, 5, 1, 12, 0, 0); // 2025-06-01T12:00:00Z
const DAY = '2025-06-01';

/** A memory store that records every take()'s `want`. */
function recording() {
  const store = memoryStore();
  const wants: number[] = [];
  const take = store.take.bind(store);
  store.take = (keyId, day, want, limit) => {
    wants.push(want);
    return take(keyId, day, want, limit);
  };
  return { store, wants };
}

/** A memory store whose take() answers only when the test says: `answer()` lets the oldest one through, `fail()` rejects it. */
function gated() {
  const store = memoryStore();
  const wants: number[] = [];
  const queue: { go: () => void; fail: () => void }[] = [];
  const take = store.take.bind(store);
  store.take = (keyId, day, want, limit) => {
    wants.push(want);
    return new Promise((resolve, reject) =>
      queue.push({
        go: () => void take(keyId, day, want, limit).then(resolve, reject),
        fail: () => reject(new Error('store down')),
      }),
    );
  };
  const settle = () => new Promise((r) => setTimeout(r, 0));
  return {
    store,
    wants,
    inFlight: () => queue.length,
    answer: async () => {
      queue.shift()!.go();
      await settle();
    },
    fail: async () => {
      queue.shift()!.fail();
      await settle();
    },
  };
}

async function admitMany(limiter: QuotaLimiter, keyId: string, n: number) {
  return Promise.all(Array.from({ length: n }, () => limiter.admit(keyId)));
}

describe('day arithmetic', () => {
  it('names the UTC day and counts whole seconds to the next UTC midnight', () => {
    expect(utcDay(Date.UTC(2025, 11, 31, 23, 59, 59, 999))).toBe('2025-12-31');
    expect(utcDay(Date.UTC(2026, 0, 1))).toBe('2026-01-01');
    expect(secondsToUtcMidnight(Date.UTC(2026, 0, 1))).toBe(86_400);
    expect(secondsToUtcMidnight(Date.UTC(2025, 11, 31, 23, 59, 59, 1))).toBe(1);
    expect(secondsToUtcMidnight(Date.UTC(2025, 11, 31, 23, 59, 0))).toBe(60);
    expect(secondsToUtcMidnight(T0)).toBe(43_200);
  });
});

describe('QuotaLimiter', () => {
  it('leases 1 unit first, then 100 at a time, then 1/8 of what is left, then one per request', async () => {
    const { store, wants } = recording();
    const limiter = new QuotaLimiter(store, { limit: 1000, now: () => T0 });
    for (let i = 0; i < 1000; i++) expect((await limiter.admit('k_a')).ok).toBe(true);
    expect((await limiter.admit('k_a')).ok).toBe(false);
    expect(wants.slice(0, 10)).toEqual([1, 100, 100, 99, 87, 76, 67, 58, 51, 45]);
    expect(wants.slice(-16)).toEqual([2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    // Every lease is at most maxLease and at most max(1, floor(remaining / 8)) of the remaining it was sized from.
    let granted = 0;
    for (const [i, w] of wants.entries()) {
      if (i > 0) expect(w).toBe(Math.min(100, Math.max(1, Math.floor((1000 - granted) / 8))));
      granted += Math.min(w, 1000 - granted);
    }
    expect(limiter.takes).toBe(wants.length);
    expect(wants.length).toBeLessThan(70);
    expect(await store.granted('k_a', DAY)).toBe(1000);
  });

  it('admits exactly the limit among 1,500 concurrent requests, coalescing the takes, with an exact Remaining', async () => {
    const { store, wants } = recording();
    const limiter = new QuotaLimiter(store, { limit: 1000, now: () => T0 });
    const results = await admitMany(limiter, 'k_b', 1500);
    expect(results.filter((r) => r.ok)).toHaveLength(1000);
    expect(results.slice(0, 1000).every((r) => r.ok)).toBe(true); // first come, first served
    // On a single instance, Remaining counts down exactly: 999, 998, ..., 0.
    expect(results.slice(0, 1000).map((r) => r.remaining)).toEqual(Array.from({ length: 1000 }, (_, i) => 999 - i));
    expect(
      results.slice(1000).every((r) => !r.ok && r.remaining === 0 && r.limit === 1000 && r.resetSeconds === 43_200),
    ).toBe(true);
    expect(wants.length).toBeLessThan(70);
    // Refusals after the limit stay local (one re-check per exhaustedRecheckMs).
    await admitMany(limiter, 'k_b', 100);
    expect(wants.length).toBe(limiter.takes);
    expect(limiter.takes).toBe(wants.length);
  });

  it('a small burst in one process leases no more than it spends: two processes admit exactly the limit', async () => {
    const store = memoryStore();
    const first = new QuotaLimiter(store, { limit: 1000, now: () => T0 });
    for (let i = 0; i < 700; i++) await first.admit('k_u');
    await first.close(); // hands back its unspent lease: 700 granted
    const a = new QuotaLimiter(store, { limit: 1000, now: () => T0 });
    const b = new QuotaLimiter(store, { limit: 1000, now: () => T0 });
    const [small, big] = await Promise.all([admitMany(a, 'k_u', 5), admitMany(b, 'k_u', 500)]);
    expect(small.filter((r) => r.ok)).toHaveLength(5);
    // Without the cap, a's second take would lease floor(299 / 8) = 37 units for its 4 waiting requests and strand 33
    // while b, told the store is empty, refused: 967 admitted in all.
    expect(big.filter((r) => r.ok)).toHaveLength(295);
    expect(await store.granted('k_u', DAY)).toBe(1000);
  });

  it('after a burst outran a lease, the next take asks for no more units than requests are waiting', async () => {
    const { store, wants } = recording();
    const limiter = new QuotaLimiter(store, { limit: 1000, now: () => T0 });
    await limiter.admit('k_v');
    await admitMany(limiter, 'k_v', 3); // a lease of 100 keeps up with 3 at once: not capped
    for (let i = 0; i < 97; i++) await limiter.admit('k_v'); // the lease runs out: 101 spent, 101 granted
    expect(wants).toEqual([1, 100]);
    // 250 at once, all waiting for a take of 100, which arrives to 250: the burst outran it. The next take asks for
    // floor((1000 - 201) / 8) = 99, fewer than the 150 waiting; it too arrives short, so the last asks for the 51
    // left waiting, not floor((1000 - 300) / 8) = 87.
    await admitMany(limiter, 'k_v', 250);
    expect(wants).toEqual([1, 100, 100, 99, 51]);
    await limiter.admit('k_v'); // the 51 were enough for everyone: one at a time gets the formula again
    expect(wants).toEqual([1, 100, 100, 99, 51, Math.floor((1000 - 351) / 8)]);
    expect(await store.granted('k_v', DAY)).toBe(351 + 81);
  });

  it('what the burst rule costs: nothing for traffic a lease keeps up with (docs/quota.md)', async () => {
    const takes = async (bursts: number, size: number) => {
      const limiter = new QuotaLimiter(memoryStore(), { limit: 1000, now: () => T0 });
      for (let b = 0; b < bursts; b++) expect((await admitMany(limiter, 'k_x', size)).every((r) => r.ok)).toBe(true);
      return limiter.takes;
    };
    // One at a time, 2, 4 or 8 at once, one burst of 1,000: about 50 takes for the 1,000-request day each way.
    expect(await takes(1000, 1)).toBe(49);
    for (const size of [2, 4, 8]) expect(await takes(1000 / size, size)).toBeLessThanOrEqual(52);
    expect(await takes(1, 1000)).toBeLessThanOrEqual(50);
  });

  it('refills ahead while a key is far from its limit: steady traffic never waits, and a process holds at most maxLease', async () => {
    const g = gated();
    const limiter = new QuotaLimiter(g.store, { limit: 100_000, now: () => T0 }); // maxLease 100
    let admitted = 0;
    const admit = async ({ waits = false } = {}) => {
      const p = limiter.admit('k_h');
      if (waits) expect(p).toBeInstanceOf(Promise); // the lease is spent: this request waits for the store
      if (g.inFlight()) await g.answer();
      expect((await p).ok).toBe(true);
      admitted++;
    };
    // Units granted (answered or in flight) minus units spent: what this process holds. Never above maxLease.
    const held = async () => (await g.store.granted('k_h', DAY)) + (g.inFlight() ? g.wants.at(-1)! : 0) - admitted;
    const spendLocally = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const a = limiter.admit('k_h');
        expect(a).not.toBeInstanceOf(Promise); // answered at once: no request waits for the store
        expect((a as Admission).ok).toBe(true);
        admitted++;
        expect(await held()).toBeLessThanOrEqual(100);
      }
    };
    await admit(); // a take of 1
    await admit(); // a take of 100: 99 in hand
    await spendLocally(73);
    expect(g.wants).toEqual([1, 100]);
    await spendLocally(1); // 25 left: the next take starts, for 100 - 25
    expect(g.wants).toEqual([1, 100, 75]);
    await spendLocally(10); // answered while 15 are left: 90 in hand
    await g.answer();
    await spendLocally(65);
    expect(g.wants).toEqual([1, 100, 75, 75]);
    // A refill ahead that fails, answered before the lease ran dry, fails no request, and the store is not called again
    // while units are in hand: the lease is spent, then a request takes (and waits), and refilling ahead resumes.
    await g.fail();
    await spendLocally(25);
    expect(g.wants).toEqual([1, 100, 75, 75]);
    await admit({ waits: true });
    expect(g.wants).toEqual([1, 100, 75, 75, 100]);
    await spendLocally(74);
    expect(g.wants).toEqual([1, 100, 75, 75, 100, 75]);
    expect(limiter.takes).toBe(6);
  });

  it('far from the limit, steady arrivals over a slow store settle into full leases (the burst cap is for near the limit)', async () => {
    const g = gated();
    const limiter = new QuotaLimiter(g.store, { limit: 100_000, now: () => T0 });
    const waiting: Promise<Admission>[] = [];
    let served = 0;
    const arrive = (n: number) => {
      for (let i = 0; i < n; i++) {
        const a = limiter.admit('k_s');
        if (a instanceof Promise) waiting.push(a);
        else served += a.ok ? 1 : 0;
      }
    };
    // 3 requests wait for the day's first take (1 unit), 3 more arrive meanwhile: it arrives short. Then 3 arrive per
    // round trip. Capped to the waiting requests, every take would be outrun again and every request would wait.
    arrive(3);
    for (let trip = 0; trip < 40; trip++) {
      arrive(3);
      if (g.inFlight()) await g.answer();
    }
    while (g.inFlight()) await g.answer();
    expect((await Promise.all(waiting)).every((a) => a.ok)).toBe(true);
    expect(waiting).toHaveLength(3 + 3 + 3); // the first 3 and those of the first two round trips; none after
    expect(served).toBe(123 - 9);
    expect(g.wants).toEqual([1, 100, 75]);
  });

  it('never refills ahead within 16 leases of the limit (the default limit of 1000 never does)', async () => {
    const wantsFor = async (limit: number) => {
      const { store, wants } = recording();
      const limiter = new QuotaLimiter(store, { limit, now: () => T0 });
      for (let i = 0; i < 300; i++) await limiter.admit('k_i');
      return wants.slice(0, 4);
    };
    // After the second take, limit - 101 units are left: 1,600 (16 leases of 100) refills ahead, 1,599 does not.
    expect(await wantsFor(1701)).toEqual([1, 100, 75, 100]);
    expect(await wantsFor(1700)).toEqual([1, 100, 100, 100]);
  });

  it('leases up to a thousandth of the limit at once when that is more than 100 (raised quotas)', async () => {
    expect(
      [1000, 100_000, 199_999, 200_000, 100_000_000].map(
        (limit) => new QuotaLimiter(memoryStore(), { limit }).maxLease,
      ),
    ).toEqual([100, 100, 199, 200, 100_000]);
    const { store, wants } = recording();
    const limiter = new QuotaLimiter(store, { limit: 100_000_000, now: () => T0 });
    for (let i = 0; i < 200_000; i++) await limiter.admit('k_j');
    expect(wants).toEqual([1, 100_000, 75_000, 75_000]); // refilled ahead at 25,000 left, topped up to 100,000
  });

  it('a refunded unit (a request admitted, then not answered) is admitted again; a refund for a day that is over is not', async () => {
    const store = memoryStore();
    let t = T0;
    const limiter = new QuotaLimiter(store, { limit: 3, now: () => t });
    const first = await limiter.admit('k_r');
    limiter.refund('k_r', first);
    expect((await admitMany(limiter, 'k_r', 4)).map((r) => r.ok)).toEqual([true, true, true, false]);
    limiter.refund('k_r', { ...first, ok: false }); // a refusal spent nothing
    expect((await limiter.admit('k_r')).ok).toBe(false);
    const late = await new QuotaLimiter(store, { limit: 3, now: () => t }).admit('k_late'); // yesterday's, by then
    t += 86_400_000;
    expect((await admitMany(limiter, 'k_late', 3)).every((r) => r.ok)).toBe(true);
    limiter.refund('k_late', late);
    expect((await limiter.admit('k_late')).ok).toBe(false);
  });

  it('a refund goes into the lease far from the limit, and to the store when the lease is full or the limit is near', async () => {
    const far = memoryStore();
    const limiter = new QuotaLimiter(far, { limit: 1_000_000, now: () => T0 }); // maxLease 1,000
    await limiter.admit('k_f'); // a take of 1, spent
    const a = await limiter.admit('k_f'); // a take of 1,000: 999 in hand
    limiter.refund('k_f', a); // 1,000 in hand
    limiter.refund('k_f', a); // full: to the store
    await new Promise((r) => setTimeout(r, 0));
    expect(await far.granted('k_f', DAY)).toBe(1000);
    await limiter.close(); // hands back the 1,000 in hand
    expect(await far.granted('k_f', DAY)).toBe(0);

    const near = memoryStore();
    const small = new QuotaLimiter(near, { limit: 1000, now: () => T0 }); // never far from its limit (docs/quota.md)
    await small.admit('k_n');
    const b = await small.admit('k_n'); // 99 in hand of 101 granted
    small.refund('k_n', b); // to the store, where another process can take it
    await new Promise((r) => setTimeout(r, 0));
    expect(await near.granted('k_n', DAY)).toBe(100);
    await small.close();
    expect(await near.granted('k_n', DAY)).toBe(1);
  });

  it('Remaining is exact at once after refunds on one process (docs/quota.md): each refund shows in the next answer', async () => {
    const limiter = new QuotaLimiter(memoryStore(), { limit: 60, now: () => T0 });
    let admitted = 0;
    const seen: [number, number][] = [];
    for (let i = 0; i < 40; i++) {
      const a = await limiter.admit('k_rl');
      admitted++;
      seen.push([a.remaining, 60 - admitted]);
      if (i % 3 === 1) {
        limiter.refund('k_rl', a); // a 400 given back: to the store, the limit being near
        admitted--;
      }
    }
    expect(seen.map(([r]) => r)).toEqual(seen.map(([, want]) => want));
    // A refund sent while a take is in flight is not in that take's total (a store applies calls in the order sent):
    // it still shows, exactly once.
    const store = memoryStore();
    const take = store.take.bind(store);
    let answer = () => {};
    store.take = (keyId, day, want, limit) => {
      const done = take(keyId, day, want, limit); // applied now, answered when the test says
      return new Promise((resolve) => {
        answer = () => resolve(done);
      });
    };
    const gl = new QuotaLimiter(store, { limit: 60, now: () => T0 });
    const first = gl.admit('k_rg');
    answer();
    const a1 = await first; // 1 granted, spent
    const pending = gl.admit('k_rg'); // a take of 7 in flight, already applied
    await new Promise((r) => setTimeout(r, 0));
    gl.refund('k_rg', a1);
    answer();
    expect((await pending).remaining).toBe(59); // 60 - 1 admitted now, the refunded one not counted
    const next = await gl.admit('k_rg');
    expect(next.remaining).toBe(58);
  });

  it('keeps keys apart', async () => {
    const limiter = new QuotaLimiter(memoryStore(), { limit: 3, now: () => T0 });
    expect((await admitMany(limiter, 'k_1', 5)).map((r) => r.ok)).toEqual([true, true, true, false, false]);
    expect((await admitMany(limiter, 'k_2', 4)).map((r) => r.ok)).toEqual([true, true, true, false]);
  });

  it('starts a fresh quota at 00:00 UTC and reports the seconds until then', async () => {
    const store = memoryStore();
    let t = Date.UTC(2025, 5, 1, 23, 59, 58, 500);
    const limiter = new QuotaLimiter(store, { limit: 2, now: () => t });
    expect(await limiter.admit('k_d')).toEqual({
      ok: true,
      limit: 2,
      remaining: 1,
      resetSeconds: 2,
      day: '2025-06-01',
    });
    expect(await limiter.admit('k_d')).toEqual({
      ok: true,
      limit: 2,
      remaining: 0,
      resetSeconds: 2,
      day: '2025-06-01',
    });
    expect(await limiter.admit('k_d')).toEqual({
      ok: false,
      limit: 2,
      remaining: 0,
      resetSeconds: 2,
      day: '2025-06-01',
    });
    t = Date.UTC(2025, 5, 1, 23, 59, 59, 999);
    expect(await limiter.admit('k_d')).toEqual({
      ok: false,
      limit: 2,
      remaining: 0,
      resetSeconds: 1,
      day: '2025-06-01',
    });
    t = Date.UTC(2025, 5, 2, 0, 0, 0, 0);
    expect(await limiter.admit('k_d')).toEqual({
      ok: true,
      limit: 2,
      remaining: 1,
      resetSeconds: 86_400,
      day: '2025-06-02',
    });
    expect(await store.granted('k_d', '2025-06-01')).toBe(2);
    expect(await store.granted('k_d', '2025-06-02')).toBe(1);
  });

  it('hands unspent units back on close, then refuses to admit', async () => {
    const store = memoryStore();
    const limiter = new QuotaLimiter(store, { limit: 1000, now: () => T0 });
    await limiter.admit('k_c');
    await limiter.admit('k_c'); // second take: a lease of 100, 99 unspent
    expect(await store.granted('k_c', DAY)).toBe(101);
    await limiter.close();
    expect(await store.granted('k_c', DAY)).toBe(2);
    await expect(limiter.admit('k_c')).rejects.toThrow(/closed/);
    await limiter.close(); // twice is fine
  });

  it('picks up units another instance handed back, after exhaustedRecheckMs', async () => {
    const store = memoryStore();
    let t = T0;
    const c = new QuotaLimiter(store, { limit: 100, now: () => t });
    const d = new QuotaLimiter(store, { limit: 100, now: () => t, exhaustedRecheckMs: 1000 });
    await c.admit('k_f');
    await c.admit('k_f'); // leases of 1, then floor(99 / 8) = 12: 11 unspent
    expect(await store.granted('k_f', DAY)).toBe(13);
    expect((await admitMany(d, 'k_f', 200)).filter((r) => r.ok)).toHaveLength(87);
    await c.close();
    expect(await store.granted('k_f', DAY)).toBe(89);
    const takes = d.takes;
    expect((await d.admit('k_f')).ok).toBe(false); // within the recheck delay: refused without asking the store
    expect(d.takes).toBe(takes);
    t += 1000;
    expect((await admitMany(d, 'k_f', 20)).filter((r) => r.ok)).toHaveLength(11);
    expect(await store.granted('k_f', DAY)).toBe(100);
  });

  it('fails closed when the store fails, and recovers when it is back', async () => {
    const store = memoryStore();
    const take = store.take.bind(store);
    let down = true;
    store.take = (...args) => (down ? Promise.reject(new Error('store down')) : take(...args));
    const limiter = new QuotaLimiter(store, { limit: 5, now: () => T0 });
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => limiter.admit('k_g')));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect(limiter.takes).toBe(1); // the 10 waited on one take
    down = false;
    expect((await admitMany(limiter, 'k_g', 7)).filter((r) => r.ok)).toHaveLength(5);
  });

  it('admits nothing with a limit of 0 and checks its options', async () => {
    const limiter = new QuotaLimiter(memoryStore(), { limit: 0, now: () => T0 });
    expect(await limiter.admit('k_z')).toEqual({ ok: false, limit: 0, remaining: 0, resetSeconds: 43_200, day: DAY });
    expect(() => new QuotaLimiter(memoryStore(), { limit: -1 })).toThrow(RangeError);
    expect(() => new QuotaLimiter(memoryStore(), { maxLease: 0 })).toThrow(RangeError);
  });
});

// ---- real stores: in one process, across processes, and after a SIGKILL ----

const redisBin = redisServerPath();
if (!redisBin) console.warn(REDIS_MISSING);

describe('quota against real stores', () => {
  let worker: CompiledWorker;
  let redis: RedisServer | undefined;
  let dir: string;
  let n = 0;
  beforeAll(async () => {
    worker = await compileWorker();
    dir = await mkdtemp(path.join(tmpdir(), 'modelpub-quota-'));
    if (redisBin) redis = await startRedis();
  });
  afterAll(async () => {
    await worker?.cleanup();
    await redis?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A fresh, empty store URL of each kind. */
  const urls: Record<string, () => string> = {
    sqlite: () => `sqlite:${path.join(dir, `gw-${++n}.db`)}`,
    redis: () => `${redis!.url}?prefix=q${++n}:`,
  };

  for (const kind of ['memory', 'sqlite', 'redis'] as const) {
    it.skipIf(kind === 'redis' && !redisBin)(
      `${kind}: one process, 1,500 concurrent requests, exactly 1,000 admitted`,
      async () => {
        const store = await openStore(kind === 'memory' ? 'memory:' : urls[kind]!());
        try {
          const limiter = new QuotaLimiter(store, { limit: 1000 });
          const results = await admitMany(limiter, 'k_one', 1500);
          expect(results.filter((r) => r.ok)).toHaveLength(1000);
          expect(await store.granted('k_one', utcDay(Date.now()))).toBe(1000);
          expect(limiter.takes).toBeLessThan(70);
          await limiter.close();
        } finally {
          await store.close();
        }
      },
    );
  }

  for (const kind of ['sqlite', 'redis'] as const) {
    describe.skipIf(kind === 'redis' && !redisBin)(`${kind}, shared by separate processes`, () => {
      it('two processes, 750 concurrent requests each: exactly 1,000 admitted', async () => {
        const url = urls[kind]!();
        const workers = [0, 1].map(() => startWorker(worker.script, 'burst', url, 'k_two', 1000, 750));
        await Promise.all(workers.map((w) => w.ready));
        for (const w of workers) w.go();
        const out = await Promise.all(
          workers.map((w) =>
            w
              .waitFor((l) => l.startsWith('{'))
              .then((l) => JSON.parse(l) as { ok: number; refused: number; takes: number }),
          ),
        );
        const exits = await Promise.all(workers.map((w) => w.exited));
        expect(
          exits.map((e) => e.code),
          exits.map((e) => e.stderr).join('\n'),
        ).toEqual([0, 0]);
        expect(out[0]!.ok + out[1]!.ok).toBe(1000);
        expect(out[0]!.refused + out[1]!.refused).toBe(500);
        const store = await openStore(url);
        try {
          expect(await store.granted('k_two', utcDay(Date.now()))).toBe(1000);
        } finally {
          await store.close();
        }
      });

      it('a process SIGKILLed while holding a lease: never more than the limit, and at most maxLease lost', async () => {
        const url = urls[kind]!();
        const w = startWorker(worker.script, 'hold', url, 'k_kill', 1000, 10);
        await w.ready;
        w.go();
        const held = JSON.parse(await w.waitFor((l) => l.startsWith('{'))) as { ok: number; takes: number };
        expect(held).toEqual({ ok: 10, takes: 2 }); // leases of 1, then 100: 91 unspent
        w.child.kill('SIGKILL');
        expect((await w.exited).signal).toBe('SIGKILL');

        const store = await openStore(url);
        try {
          const day = utcDay(Date.now());
          expect(await store.granted('k_kill', day)).toBe(101);
          const limiter = new QuotaLimiter(store, { limit: 1000 });
          const ok = (await admitMany(limiter, 'k_kill', 1500)).filter((r) => r.ok).length;
          expect(ok).toBe(899);
          expect(held.ok + ok).toBeLessThanOrEqual(1000);
          expect(1000 - (held.ok + ok)).toBe(91); // the dead lease, <= maxLease
          expect(await store.granted('k_kill', day)).toBe(1000);
          await limiter.close();
        } finally {
          await store.close();
        }
      });

      it('a process SIGKILLed in the middle of admitting: never more than the limit, at most maxLease (+ requests in flight) lost', async () => {
        const url = urls[kind]!();
        // Out of reach before the kill (the worker is killed mid-stream, never done), and still leased 100 at a time,
        // refilled ahead: the largest limit whose maxLease is 100.
        const limit = 100_000;
        const log = path.join(dir, `stream-${++n}.log`);
        const w = startWorker(worker.script, 'stream', url, 'k_mid', limit, log);
        await w.ready;
        w.go();
        const recorded = async () => ((await readFile(log, 'utf8').catch(() => '')).match(/ok\n/g) ?? []).length;
        while ((await recorded()) < 2_000) await new Promise((resolve) => setTimeout(resolve, 20));
        w.child.kill('SIGKILL');
        expect((await w.exited).signal).toBe('SIGKILL');
        const printed = await recorded();
        expect(w.lines).not.toContain('done');

        const store = await openStore(url);
        try {
          const day = utcDay(Date.now());
          const atKill = await store.granted('k_mid', day);
          // Granted covers what it admitted; what it had not spent is at most its lease (100), plus at most one
          // admission per loop (8) not yet recorded in the log.
          expect(atKill).toBeGreaterThanOrEqual(printed);
          expect(atKill - printed).toBeLessThanOrEqual(100 + 8);
          // Everything left can still be granted, exactly once: no unit was lost beyond the bound, none double-granted.
          const { taken } = await store.take('k_mid', day, limit, limit);
          expect(taken).toBe(limit - atKill);
          expect(printed + taken).toBeLessThanOrEqual(limit);
          expect(await store.granted('k_mid', day)).toBe(limit);
        } finally {
          await store.close();
        }
      });
    });
  }
});
