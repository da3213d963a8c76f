// Quotas when Redis fails, against a real redis-server: it restarts without its data, it stops answering for a while
// (SIGSTOP), a connection drops after a take ran but before its answer arrived, its persistence is off.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuotaLimiter, utcDay, type Admission } from '../src/gateway/quota.js';
import { openStore } from '../src/gateway/stores/index.js';
import { StoreDataLostError, type QuotaStore } from '../src/gateway/stores/types.js';
import { REDIS_MISSING, redisServerPath, startRedis, type RedisServer } from './helpers/redis.js';

const DAY = '2025-06-01';
let n = 0;
const fresh = (server: RedisServer) => openStore(`${server.url}?prefix=f${++n}:`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Admits `count` requests one after another; how many were admitted, and the errors of those that failed. */
async function admitMany(limiter: QuotaLimiter, key: string, count: number) {
  let ok = 0;
  const errors: Error[] = [];
  for (let i = 0; i < count; i++) {
    try {
      if ((await limiter.admit(key)).ok) ok++;
    } catch (e) {
      errors.push(e as Error);
    }
  }
  return { ok, errors };
}

describe.skipIf(!redisServerPath())(`Redis faults${redisServerPath() ? '' : ` (${REDIS_MISSING})`}`, () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('a Redis that restarted without its data fails every take (fail closed) instead of admitting the day again', async () => {
    const store = await fresh(server);
    const limiter = new QuotaLimiter(store, { limit: 200 });
    try {
      const before = await admitMany(limiter, 'k_lost', 150);
      expect(before.ok).toBe(150);
      await limiter.close(); // its unspent units back: the store counts 150
      await server.restart();
      const again = new QuotaLimiter(store, { limit: 200 }); // the same process, its store opened before the restart
      let after = { ok: 0, errors: [] as Error[] };
      while (after.errors.every((e) => !(e instanceof StoreDataLostError))) {
        after = await admitMany(again, 'k_lost', 100); // the first commands may meet the reconnection
        if (after.ok) break;
        await sleep(100);
      }
      expect(before.ok + after.ok).toBeLessThanOrEqual(200); // 350 before: the day started again from zero
      expect(after.ok).toBe(0);
      expect(after.errors.at(-1)).toBeInstanceOf(StoreDataLostError);
      expect(after.errors.at(-1)!.message).toMatch(/lost its data .*until the gateway restarts; see docs\/quota\.md/);
      // It stays refused, whatever is written since: the counters of the day are gone.
      await expect(store.take('k_other', DAY, 1, 10)).rejects.toBeInstanceOf(StoreDataLostError);
      await again.close();
      // A gateway started now adopts the store as it is (the operator's reconciliation, docs/quota.md).
      const restarted = await fresh(server);
      expect((await restarted.take('k_lost', DAY, 1, 10)).taken).toBe(1);
      await restarted.close();
    } finally {
      await store.close();
    }
  });

  it('a Redis restarted from an RDB snapshot older than the last takes is noticed: never past the quota, one gateway or two', async () => {
    const raw = new Redis(server.url);
    const one = await fresh(server);
    const a = await fresh(server); // two gateways sharing one prefix
    const b = await openStore(`${server.url}?prefix=f${n}:`);
    try {
      const alone = new QuotaLimiter(one, { limit: 200 });
      const [la, lb] = [new QuotaLimiter(a, { limit: 200 }), new QuotaLimiter(b, { limit: 200 })];
      const first = (await admitMany(alone, 'k_rdb', 120)).ok;
      const shared = (await admitMany(la, 'k_two', 60)).ok + (await admitMany(lb, 'k_two', 60)).ok;
      expect([first, shared]).toEqual([120, 120]);
      await raw.save(); // the snapshot Redis will come back with
      const sinceSnapshot = (await admitMany(alone, 'k_rdb', 40)).ok;
      const sharedSince = (await admitMany(la, 'k_two', 20)).ok + (await admitMany(lb, 'k_two', 20)).ok;
      raw.disconnect();
      await server.restart(); // SIGKILL: its dump.rdb is the snapshot above
      // Every request of the rest of the day, as long as the limiters keep being asked: never past 200.
      let after = { ok: 0, errors: [] as Error[] };
      let afterShared = 0;
      const errors: Error[] = [];
      while (!errors.some((e) => e instanceof StoreDataLostError)) {
        after = await admitMany(alone, 'k_rdb', 100); // the first commands may meet the reconnection
        errors.push(...after.errors);
        if (after.ok) break;
        await sleep(100);
      }
      for (const l of [la, lb]) {
        const r = await admitMany(l, 'k_two', 100);
        afterShared += r.ok;
        errors.push(...r.errors);
      }
      expect(first + sinceSnapshot + after.ok).toBeLessThanOrEqual(200);
      expect(shared + sharedSince + afterShared).toBeLessThanOrEqual(200);
      const lost = errors.filter((e) => e instanceof StoreDataLostError);
      expect(lost.length).toBeGreaterThan(0);
      expect(lost[0]!.message).toMatch(
        /went back in time: it counts \d+ units ever granted to key k_\w+ on \d{4}-\d{2}-\d{2}, fewer than the \d+ this gateway saw .*RDB snapshot/,
      );
      // The day's count was raised to what the gateway had seen: one started now admits only what is left of it.
      const restarted = await openStore(`${server.url}?prefix=f${n - 1}:`);
      expect(await restarted.granted('k_rdb', utcDay(Date.now()))).toBeGreaterThanOrEqual(first + sinceSnapshot - 1);
      await restarted.close();
      for (const l of [alone, la, lb]) await l.close().catch(() => {});
    } finally {
      raw.disconnect();
      for (const s of [one, a, b]) await s.close();
    }
  });

  it('warns plainly at start about RDB-only persistence', async () => {
    const rdb = await startRedis({ args: ['--save', '3600 1 300 100'] });
    try {
      const store = await openStore(rdb.url);
      expect(store.warnings).toEqual([
        expect.stringMatching(
          /RDB snapshots only \(save "3600 1 300 100"\): a crash or restart takes the day's quota counters and the keys back to the last snapshot.*set appendonly yes/,
        ),
      ]);
      await store.close();
    } finally {
      await rdb.stop();
    }
  });

  it('a stall (SIGSTOP) costs waiting requests, never units: every unit granted in the store was admitted or handed back', async () => {
    const store = await fresh(server);
    const limiter = new QuotaLimiter(store, { limit: 100_000, maxLease: 20, takeWaitMs: 500 });
    const key = 'k_stall';
    let ok = 0;
    let failed = 0;
    const admitFor = async (ms: number) => {
      for (const until = Date.now() + ms; Date.now() < until; ) {
        await Promise.resolve()
          .then(() => limiter.admit(key))
          .then(
            (a: Admission) => void (a.ok && ok++),
            () => void failed++,
          );
        await sleep(10);
      }
    };
    try {
      await admitFor(300);
      server.pause();
      try {
        await admitFor(3_000);
      } finally {
        server.resume();
      }
      await admitFor(500);
      expect(failed).toBeGreaterThan(0); // requests did wait and fail while Redis was stopped
      await limiter.close();
      // Before, every request during the stall started a take of its own, applied when Redis resumed, for no one.
      expect(await store.granted(key, utcDay(Date.now()))).toBe(ok);
    } finally {
      await store.close();
    }
  });

  it('a take resent after its connection dropped (the answer lost) is applied once', async () => {
    // A proxy in front of Redis that, once armed, passes the next command on and then cuts the connection before
    // the answer comes back: the take ran, and ioredis sends it again on its new connection.
    let armed = false;
    const sockets = new Set<Socket>();
    const proxy: Server = createServer((client) => {
      const upstream = connect(server.port, '127.0.0.1');
      sockets.add(client).add(upstream);
      let cut = false;
      client.on('data', (d: Buffer) => {
        if (armed && /evalsha|EVALSHA/.test(d.toString('latin1'))) [armed, cut] = [false, true];
        upstream.write(d);
      });
      upstream.on('data', (d: Buffer) => {
        if (cut) {
          client.destroy();
          upstream.destroy();
        } else client.write(d);
      });
      for (const s of [client, upstream])
        s.on('error', () => {}).on('close', () => {
          client.destroy();
          upstream.destroy();
        });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
    const url = `redis://127.0.0.1:${(proxy.address() as AddressInfo).port}?prefix=r${++n}:`;
    const store: QuotaStore = await openStore(url);
    const raw = new Redis(server.url);
    try {
      await store.take('k_resend', DAY, 1, 1000);
      armed = true;
      const second = await store.take('k_resend', DAY, 10, 1000);
      expect(armed).toBe(false); // the cut happened
      expect(second).toEqual({ taken: 10, granted: 11 });
      expect(await raw.get(`r${n}:quota:${DAY}:k_resend`)).toBe('11'); // 21 when the resend was applied again
    } finally {
      await store.close();
      raw.disconnect();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('warns at start when appendonly is off, or when CONFIG is disabled; not when it is on', async () => {
    const off = await fresh(server);
    expect(off.warnings).toEqual([
      expect.stringMatching(/runs with appendonly no and no snapshots: a restart can forget .*set appendonly yes/),
    ]);
    await off.close();
    const durable = await startRedis({ appendonly: true });
    const noConfig = await startRedis({ args: ['--rename-command', 'CONFIG', ''] });
    try {
      const on = await openStore(durable.url);
      expect(on.warnings).toEqual([]);
      await on.close();
      const hidden = await openStore(noConfig.url);
      expect(hidden.warnings).toEqual([
        expect.stringMatching(
          /cannot check the persistence of Redis at .* \(CONFIG GET refused: .*\): make sure it runs with appendonly yes/,
        ),
      ]);
      await hidden.close();
    } finally {
      await durable.stop();
      await noConfig.stop();
    }
  });
});
