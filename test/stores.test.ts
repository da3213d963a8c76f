// One conformance suite, testStore(), run against every quota store driver (memory, SQLite, Redis), plus each
// driver's own extras, openStore() URL parsing, and keys.ts (key format, hashing, KeyCache).
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_STORE_URL,
  DuplicateKeyError,
  naming,
  openStore,
  type KeyRecord,
  type QuotaStore,
} from '../src/gateway/stores/index.js';
import { memoryStore } from '../src/gateway/stores/memory.js';
import { StoreDataLostError } from '../src/gateway/stores/types.js';
import {
  KeyCache,
  createKey,
  fingerprint,
  generateKey,
  hashKey,
  isWellFormedKey,
  keyIdFor,
  revokeKey,
} from '../src/gateway/keys.js';
import { UsageError } from '../src/errors.js';
import { REDIS_MISSING, redisServerPath, startRedis, type RedisServer } from './helpers/redis.js';

const DAY = '2025-06-01';
const NEXT_DAY = '2025-06-02';

/** One store under test, fresh for each test. */
interface Harness {
  store: QuotaStore;
  /** Another connection to the same data (the same object where the driver has no connections). */
  second(): Promise<QuotaStore>;
  /** Everything the driver keeps, as text/bytes, to look for secrets in. */
  dump(): Promise<string>;
  /** Close and open again from durable state; absent for drivers that keep nothing. */
  reopen?(): Promise<QuotaStore>;
  cleanup(): Promise<void>;
}

function testStore(
  name: string,
  setup: () => Promise<Harness>,
  additionalTests?: (fresh: () => Promise<Harness>) => void,
) {
  describe(`store conformance: ${name}`, () => {
    let h: Harness;
    afterEach(async () => {
      await h?.cleanup();
    });
    const fresh = async () => (h = await setup());

    it('creates, finds, lists and revokes keys', async () => {
      const { store } = await fresh();
      expect(store.driver).toBe(name);
      const a = await createKey(store, 'alpha', new Date('2025-01-01T00:00:00Z'));
      const b = await createKey(store, 'beta', new Date('2025-01-02T00:00:00Z'));
      expect(a.record).toEqual({
        id: keyIdFor(hashKey(a.key)),
        hash: hashKey(a.key),
        label: 'alpha',
        created_at: '2025-01-01T00:00:00.000Z',
        revoked_at: null,
      });
      expect(await store.findKey(a.record.hash)).toEqual(a.record);
      expect(await store.findKey(hashKey(generateKey()))).toBeNull();
      expect(await store.listKeys()).toEqual([a.record, b.record]);

      const revoked = await revokeKey(store, a.record.id, new Date('2025-02-01T00:00:00Z'));
      expect(revoked).toEqual({ ...a.record, revoked_at: '2025-02-01T00:00:00.000Z' });
      // Revoking again (here by the key itself) keeps the first time.
      expect(await revokeKey(store, a.key, new Date('2025-03-01T00:00:00Z'))).toEqual(revoked);
      expect(await store.findKey(a.record.hash)).toEqual(revoked);
      expect(await store.listKeys()).toEqual([revoked, b.record]);
      expect(await store.revokeKey('k_00000000', '2025-02-01T00:00:00.000Z')).toBeNull();
      expect(await revokeKey(store, generateKey())).toBeNull();
    });

    it('refuses a second key with the same id or hash', async () => {
      const { store } = await fresh();
      const { record } = await createKey(store, 'one');
      await expect(store.createKey({ ...record, label: 'same id', hash: hashKey('other') })).rejects.toBeInstanceOf(
        DuplicateKeyError,
      );
      await expect(store.createKey({ ...record, id: 'k_ffffffff' })).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(await store.listKeys()).toEqual([record]);
    });

    it('keeps only hashes: the key itself appears nowhere in the store', async () => {
      const { store, dump } = await fresh();
      const { key, record } = await createKey(store, 'secret holder');
      await store.take(record.id, DAY, 3, 10);
      const all = await dump();
      expect(all).toContain(record.hash); // the dump really shows the store's contents
      expect(all).not.toContain(key);
      expect(all).not.toContain(key.slice(3)); // nor its random part
      expect(all).not.toContain(Buffer.from(key.slice(3), 'base64url').toString('hex'));
    });

    it('take() grants up to the limit, then nothing', async () => {
      const { store } = await fresh();
      expect(await store.granted('k_1', DAY)).toBe(0);
      expect(await store.take('k_1', DAY, 4, 10)).toEqual({ taken: 4, granted: 4 });
      expect(await store.take('k_1', DAY, 4, 10)).toEqual({ taken: 4, granted: 8 });
      expect(await store.take('k_1', DAY, 4, 10)).toEqual({ taken: 2, granted: 10 });
      expect(await store.take('k_1', DAY, 1, 10)).toEqual({ taken: 0, granted: 10 });
      // A lower limit than what is granted grants nothing and changes nothing.
      expect(await store.take('k_1', DAY, 5, 3)).toEqual({ taken: 0, granted: 10 });
      expect(await store.granted('k_1', DAY)).toBe(10);
      // A limit of 0 grants nothing.
      expect(await store.take('k_2', DAY, 1, 0)).toEqual({ taken: 0, granted: 0 });
    });

    it('take() is exact under concurrency, across two connections', async () => {
      const { store, second } = await fresh();
      const other = await second();
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => (i % 2 ? store : other).take('k_c', DAY, 1 + (i % 3), 150)),
      );
      expect(results.reduce((s, r) => s + r.taken, 0)).toBe(150);
      expect(Math.max(...results.map((r) => r.granted))).toBe(150);
      expect(await store.granted('k_c', DAY)).toBe(150);
      expect(await other.granted('k_c', DAY)).toBe(150);
      const ones = await Promise.all(
        Array.from({ length: 200 }, (_, i) => (i % 2 ? store : other).take('k_d', DAY, 1, 150)),
      );
      expect(ones.filter((r) => r.taken === 1)).toHaveLength(150);
    });

    it('counts each key and each day separately', async () => {
      const { store } = await fresh();
      expect(await store.take('k_a', DAY, 5, 5)).toEqual({ taken: 5, granted: 5 });
      expect(await store.take('k_a', DAY, 1, 5)).toEqual({ taken: 0, granted: 5 });
      expect(await store.take('k_a', NEXT_DAY, 2, 5)).toEqual({ taken: 2, granted: 2 });
      expect(await store.take('k_b', DAY, 3, 5)).toEqual({ taken: 3, granted: 3 });
      expect(await store.granted('k_a', DAY)).toBe(5);
      expect(await store.granted('k_a', NEXT_DAY)).toBe(2);
      expect(await store.granted('k_b', NEXT_DAY)).toBe(0);
    });

    it('release() hands units back, never below zero', async () => {
      const { store } = await fresh();
      await store.take('k_r', DAY, 10, 10);
      await store.release('k_r', DAY, 3);
      expect(await store.granted('k_r', DAY)).toBe(7);
      expect(await store.take('k_r', DAY, 10, 10)).toEqual({ taken: 3, granted: 10 });
      await store.release('k_r', DAY, 50);
      expect(await store.granted('k_r', DAY)).toBe(0);
      await store.release('k_none', DAY, 2);
      expect(await store.granted('k_none', DAY)).toBe(0);
      await store.release('k_r', DAY, 0);
      expect(await store.granted('k_r', DAY)).toBe(0);
    });

    it('rejects nonsense arguments', async () => {
      const { store } = await fresh();
      await expect(store.take('k_x', DAY, 0, 10)).rejects.toThrow(RangeError);
      await expect(store.take('k_x', DAY, 1.5, 10)).rejects.toThrow(RangeError);
      await expect(store.take('k_x', DAY, 1, -1)).rejects.toThrow(RangeError);
      await expect(store.take('k_x', '2025-6-1', 1, 10)).rejects.toThrow(/YYYY-MM-DD/);
      await expect(store.release('k_x', DAY, -1)).rejects.toThrow(RangeError);
      expect(await store.granted('k_x', DAY)).toBe(0);
    });

    it('keeps keys and counters across a reopen (a gateway restart), if the driver is durable', async (ctx) => {
      const harness = await fresh();
      if (!harness.reopen) return ctx.skip();
      const { record } = await createKey(harness.store, 'durable');
      await harness.store.take(record.id, DAY, 7, 10);
      await harness.store.revokeKey(record.id, '2025-06-01T12:00:00.000Z');
      const again = await harness.reopen();
      expect(await again.findKey(record.hash)).toEqual({ ...record, revoked_at: '2025-06-01T12:00:00.000Z' });
      expect(await again.granted(record.id, DAY)).toBe(7);
      expect(await again.take(record.id, DAY, 10, 10)).toEqual({ taken: 3, granted: 10 });
    });

    additionalTests?.(fresh);
  });
}

// memory:
testStore('memory', async () => {
  const store = memoryStore();
  return {
    store,
    second: async () => store,
    dump: async () => JSON.stringify(await store.listKeys()),
    cleanup: () => store.close(),
  };
});

// sqlite:PATH, a fresh file per test.
testStore(
  'sqlite',
  async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'modelpub-sqlite-'));
    const file = path.join(dir, 'nested', 'gateway.db');
    const opened: QuotaStore[] = [];
    const open = async () => {
      const s = await openStore(`sqlite:${file}`);
      opened.push(s);
      return s;
    };
    const h: Harness = {
      store: await open(),
      second: open,
      // The main file and the write-ahead log: between checkpoints, recent writes live only in the -wal file.
      dump: async () =>
        (await Promise.all(['', '-wal'].map((s) => readFile(file + s).catch(() => Buffer.alloc(0)))))
          .map((b) => b.toString('latin1'))
          .join('\n'),
      reopen: async () => {
        await Promise.all(opened.map((s) => s.close()));
        h.store = await open();
        return h.store;
      },
      cleanup: async () => {
        await Promise.all(opened.map((s) => s.close()));
        await rm(dir, { recursive: true, force: true });
      },
    };
    return h;
  },
  (fresh) => {
    it('creates the parent folder and drops counters older than yesterday', async () => {
      const { store } = await fresh();
      await store.take('k_p', '2025-05-01', 1, 10);
      await store.take('k_p', '2025-05-30', 1, 10);
      await store.take('k_p', '2025-05-31', 1, 10);
      expect(await store.granted('k_p', '2025-05-01')).toBe(0);
      expect(await store.take('k_p', DAY, 1, 10)).toEqual({ taken: 1, granted: 1 });
      expect(await store.granted('k_p', '2025-05-30')).toBe(0);
      expect(await store.granted('k_p', '2025-05-31')).toBe(1);
    });
  },
);

// redis://, one real redis-server for the file and a fresh key prefix per test.
const redisBin = redisServerPath();
if (!redisBin) console.warn(REDIS_MISSING);
describe.skipIf(!redisBin)('redis-server', () => {
  let server: RedisServer;
  let raw: Redis;
  let n = 0;
  beforeAll(async () => {
    server = await startRedis();
    raw = new Redis(server.url);
  });
  afterAll(async () => {
    raw?.disconnect();
    await server?.stop();
  });

  const dumpRedis = async (): Promise<string> => {
    const out: string[] = [];
    for (const k of (await raw.keys('*')).sort()) {
      const type = await raw.type(k);
      const value =
        type === 'string'
          ? await raw.get(k)
          : type === 'hash'
            ? await raw.hgetall(k)
            : type === 'set'
              ? await raw.smembers(k)
              : type === 'list'
                ? await raw.lrange(k, 0, -1)
                : type === 'zset'
                  ? await raw.zrange(k, 0, -1, 'WITHSCORES')
                  : `<${type}>`;
      out.push(`${k} ${JSON.stringify(value)}`);
    }
    return out.join('\n');
  };

  testStore(
    'redis',
    async () => {
      const url = `${server.url}?prefix=t${++n}:`;
      const opened: QuotaStore[] = [];
      const open = async () => {
        const s = await openStore(url);
        opened.push(s);
        return s;
      };
      const h: Harness = {
        store: await open(),
        second: open,
        dump: dumpRedis,
        // A gateway restart: the data lives in redis-server, not in the process.
        reopen: async () => {
          await Promise.all(opened.map((s) => s.close()));
          h.store = await open();
          return h.store;
        },
        cleanup: async () => {
          await Promise.all(opened.map((s) => s.close()));
        },
      };
      return h;
    },
    (fresh) => {
      it('lets counters expire two days after their last take, and keeps keys under the prefix', async () => {
        const { store } = await fresh();
        await store.take('k_ttl', DAY, 1, 10);
        const counter = `t${n}:quota:${DAY}:k_ttl`;
        const ttl = await raw.ttl(counter);
        expect(ttl).toBeGreaterThan(2 * 86_400 - 10);
        expect(ttl).toBeLessThanOrEqual(2 * 86_400);
        await store.release('k_ttl', DAY, 1);
        expect(await raw.ttl(counter)).toBeGreaterThan(2 * 86_400 - 10); // release keeps the expiry
        const { record } = await createKey(store, 'prefixed');
        expect(await raw.hget(`t${n}:ids`, record.id)).toBe(record.hash);
        expect(await raw.exists(`t${n}:key:${record.hash}`)).toBe(1);
      });

      it('fails a key lookup within its timeout when Redis stops answering; a take waits, and its answer counts', async () => {
        const { store } = await fresh();
        await store.take('k_p', DAY, 1, 10);
        server.pause();
        let take: Promise<unknown> | undefined;
        try {
          // Its own timeout (2 s by default) ends it, not forever: it says so (were it to wait, the test would hang).
          await expect(store.findKey('0'.repeat(64))).rejects.toThrow(/timed out/i);
          // A take is not given up on: its outcome would be unknown, and a later one could not tell (quota.ts waits
          // for it at most takeWaitMs, and starts no other take of the key meanwhile).
          take = store.take('k_p', DAY, 2, 10);
          const early = await Promise.race([take, new Promise((r) => setTimeout(() => r('waiting'), 2_500))]);
          expect(early).toBe('waiting');
        } finally {
          server.resume();
        }
        expect(await take).toEqual({ taken: 2, granted: 3 });
        expect((await store.take('k_p', DAY, 1, 10)).taken).toBe(1);
        expect(await store.granted('k_p', DAY)).toBe(4);
      });

      it('uses the database the URL names, and refuses one the server does not have (never database 0 instead)', async () => {
        const one = await openStore(`${server.url}/3?prefix=t${++n}:`);
        try {
          await one.take('k_db', DAY, 1, 10);
          const db3 = new Redis(`${server.url}/3`);
          expect(await db3.get(`t${n}:quota:${DAY}:k_db`)).toBe('1');
          db3.disconnect();
          expect(await raw.exists(`t${n}:quota:${DAY}:k_db`)).toBe(0); // not in database 0
        } finally {
          await one.close();
        }
        await expect(openStore(`${server.url}/99`)).rejects.toThrow(/has no database 99: .*out of range/);
      });

      it('still works after Redis forgets its scripts', async () => {
        const { store } = await fresh();
        await store.take('k_s', DAY, 1, 10);
        await raw.script('FLUSH');
        expect(await store.take('k_s', DAY, 2, 10)).toEqual({ taken: 2, granted: 3 });
      });
    },
  );
});

describe('naming()', () => {
  it('a store failure names the store it concerns; its own verdicts pass as they are', async () => {
    const raw = memoryStore();
    raw.take = () => Promise.reject(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }));
    raw.ping = () => Promise.reject(new StoreDataLostError('the SQLite store /srv/g.db was deleted'));
    const store = naming(raw, 'the SQLite store', '/srv/g.db');
    const e = (await store.take('k_a', DAY, 1, 10).catch((err: unknown) => err)) as Error & { code?: string };
    expect(e.message).toBe('the SQLite store /srv/g.db: database or disk is full');
    expect(e.code).toBe('SQLITE_FULL');
    await expect(store.ping()).rejects.toBeInstanceOf(StoreDataLostError);
    await expect(store.take('k_a', DAY, 0, 10)).rejects.toThrow(/^the SQLite store \/srv\/g\.db: /);
    expect(store.driver).toBe('memory');
  });
});

describe('openStore()', () => {
  it('opens memory:, and sqlite:PATH with its folder created', async () => {
    const mem = await openStore('memory:');
    expect(mem.driver).toBe('memory');
    await mem.close();
    const dir = await mkdtemp(path.join(tmpdir(), 'modelpub-open-'));
    try {
      const file = path.join(dir, 'a', 'b', 'gw.db');
      const s = await openStore(`sqlite:${file}`);
      expect(s.driver).toBe('sqlite');
      await s.close();
      expect((await stat(file)).isFile()).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('opens a relative sqlite: path against the working directory (the default is sqlite:var/gateway.db)', async () => {
    expect(DEFAULT_STORE_URL).toBe('sqlite:var/gateway.db');
    const dir = await mkdtemp(path.join(tmpdir(), 'modelpub-cwd-'));
    const before = process.cwd();
    process.chdir(dir);
    try {
      const s = await openStore(DEFAULT_STORE_URL);
      await s.take('k_cwd', DAY, 1, 1);
      await s.close();
    } finally {
      process.chdir(before);
    }
    try {
      expect(existsSync(path.join(dir, 'var', 'gateway.db'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names the accepted forms for anything else', async () => {
    const forms = /sqlite:PATH .*redis:\/\/HOST:PORT.*memory:/;
    await expect(openStore('postgres://db/x')).rejects.toThrow(forms);
    await expect(openStore('postgres://db/x')).rejects.toBeInstanceOf(UsageError);
    await expect(openStore('var/gateway.db')).rejects.toThrow(forms);
    await expect(openStore('sqlite:')).rejects.toThrow(forms);
    await expect(openStore('sqlite://var/x.db')).rejects.toThrow(/without "\/\/"/);
    await expect(openStore('mysql://user:hunter2@db/x')).rejects.toThrow(/\*\*\*@db/);
    await expect(openStore('mysql://user:hunter2@db/x')).rejects.not.toThrow(/hunter2/);
    await expect(openStore('SQLite:var/x.db')).rejects.toThrow(/in lower case, sqlite:/);
  });

  it('refuses a redis:// database that is not a whole number, and query options other than prefix, before connecting', async () => {
    for (const db of ['abc', '-1', '1.5', '0/x']) {
      await expect(openStore(`redis://:pw@127.0.0.1:1/${db}`), db).rejects.toThrow(/the database is a whole number/);
    }
    await expect(openStore('redis://127.0.0.1:1/0?prefx=mp')).rejects.toThrow(
      /unknown option "prefx"; the one option is \?prefix=P/,
    );
    await expect(openStore('redis://127.0.0.1:1?password=hunter2')).rejects.toBeInstanceOf(UsageError);
    await expect(openStore('redis://127.0.0.1:1?password=hunter2')).rejects.not.toThrow(/hunter2/);
  });

  it.skipIf(!redisBin)('says which Redis it could not reach, without its password', async () => {
    const err = await openStore('redis://:hunter2@127.0.0.1:1').catch((e: Error) => e);
    expect(String(err)).toMatch(/Cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1.*ECONNREFUSED/);
    expect(String(err)).not.toContain('hunter2');
  });
});

describe('keys', () => {
  it('makes mp_ keys of 32 random bytes, hashed with SHA-256, with an 8-hex fingerprint that is the public id', () => {
    const key = generateKey();
    expect(key).toMatch(/^mp_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key.slice(3), 'base64url')).toHaveLength(32);
    expect(isWellFormedKey(key)).toBe(true);
    expect(generateKey()).not.toBe(key);
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(fingerprint('abc')).toBe('ba7816bf');
    expect(keyIdFor(hashKey('abc'))).toBe('k_ba7816bf');
    expect(isWellFormedKey('mp_short')).toBe(false);
    expect(isWellFormedKey(`${key}x`)).toBe(false);
    expect(isWellFormedKey(` ${key}`)).toBe(false);
  });

  it('checks labels and the revoke argument', async () => {
    const store = memoryStore();
    await expect(createKey(store, 'x'.repeat(201))).rejects.toThrow(/at most 200/);
    await expect(createKey(store, 'a\nb')).rejects.toThrow(/control characters/);
    await expect(revokeKey(store, 'alpha')).rejects.toThrow(/neither a key id/);
    expect(await store.listKeys()).toEqual([]);
  });

  it('draws a new key when the id is taken', async () => {
    const store = memoryStore();
    const real = store.createKey.bind(store);
    let calls = 0;
    store.createKey = async (rec: KeyRecord) => {
      if (++calls === 1) throw new DuplicateKeyError(rec.id);
      return real(rec);
    };
    const { record } = await createKey(store, 'retry');
    expect(calls).toBe(2);
    expect(await store.listKeys()).toEqual([record]);
  });
});

describe('KeyCache', () => {
  const counting = () => {
    const store = memoryStore();
    const finds = { n: 0 };
    const real = store.findKey.bind(store);
    store.findKey = (hash: string) => {
      finds.n++;
      return real(hash);
    };
    return { store, finds };
  };

  it('serves repeated lookups from memory for the ttl, and coalesces concurrent ones', async () => {
    const { store, finds } = counting();
    let t = 0;
    const cache = new KeyCache(store, { now: () => t });
    const { key, record } = await createKey(store, 'cached');
    const got = await Promise.all(Array.from({ length: 50 }, () => cache.lookup(key)));
    expect(got.every((r) => r?.id === record.id)).toBe(true);
    expect(finds.n).toBe(1);
    t = 9_999;
    expect(await cache.lookup(key)).toEqual(record);
    expect(finds.n).toBe(1);
    t = 10_000;
    expect(await cache.lookup(key)).toEqual(record);
    expect(finds.n).toBe(2);
  });

  it('notices a revocation within the ttl, and a new key within the negative ttl', async () => {
    const { store, finds } = counting();
    let t = 0;
    const cache = new KeyCache(store, { now: () => t, ttlMs: 10_000, negativeTtlMs: 1_000 });
    const { key, record } = await createKey(store, 'soon revoked');
    expect(await cache.lookup(key)).toEqual(record);
    await revokeKey(store, record.id);
    t = 5_000;
    expect(await cache.lookup(key)).toEqual(record); // still cached: documented
    t = 10_001;
    expect(await cache.lookup(key)).toBeNull();
    t = 15_000;
    expect(await cache.lookup(key)).toBeNull(); // revoked answers are cached too
    expect(finds.n).toBe(2);

    const later = generateKey();
    expect(await cache.lookup(later)).toBeNull();
    await store.createKey({
      id: keyIdFor(hashKey(later)),
      hash: hashKey(later),
      label: 'late',
      created_at: new Date(0).toISOString(),
      revoked_at: null,
    });
    t = 15_999;
    expect(await cache.lookup(later)).toBeNull();
    t = 16_000;
    expect((await cache.lookup(later))?.label).toBe('late');
  });

  it('refuses malformed keys without asking the store, and stays within maxEntries', async () => {
    const { store, finds } = counting();
    const cache = new KeyCache(store, { maxEntries: 3 });
    expect(await cache.lookup('')).toBeNull();
    expect(await cache.lookup('Bearer abc')).toBeNull();
    expect(finds.n).toBe(0);
    for (let i = 0; i < 10; i++) await cache.lookup(generateKey());
    expect(finds.n).toBe(10);
    expect(cache.size).toBe(3);
    // Malformed keys are never cached, whatever their length, and are refused at once (no promise, no store).
    for (const bad of [`mp_${'a'.repeat(42)}`, `mp_${'a'.repeat(44)}`, 'x'.repeat(5000), `mp_${'é'.repeat(43)}`]) {
      expect(cache.lookup(bad)).toBeNull();
    }
    expect(finds.n).toBe(10);
    expect(cache.size).toBe(3);
  });

  it('drops expired answers (and the raw keys they hold) from the oldest end when the store answers again', async () => {
    const { store } = counting();
    let t = 0;
    const cache = new KeyCache(store, { now: () => t, ttlMs: 10_000, negativeTtlMs: 1_000 });
    const keys = await Promise.all(['a', 'b', 'c'].map(async (l) => (await createKey(store, l)).key));
    for (const k of keys) await cache.lookup(k);
    expect(cache.size).toBe(3);
    t = 10_000; // all three expired
    await cache.lookup(generateKey()); // an unknown key: the store is asked, the sweep runs
    expect(cache.size).toBe(1);
    const again = cache.lookup(keys[0]!); // expired: asked of the store again
    expect(again).toBeInstanceOf(Promise);
    await again;
  });

  it('does not cache store failures', async () => {
    const { store } = counting();
    const cache = new KeyCache(store);
    const { key, record } = await createKey(store, 'flaky');
    const real = store.findKey;
    store.findKey = async () => {
      throw new Error('store down');
    };
    await expect(cache.lookup(key)).rejects.toThrow('store down');
    store.findKey = real;
    expect(await cache.lookup(key)).toEqual(record);
  });
});
