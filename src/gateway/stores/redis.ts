// `redis://HOST:PORT[/DB]` (or rediss://): several gateway instances, on one machine or many, share one Redis.
// Every write is one Lua script, which Redis runs atomically, so take() can never grant past the limit however many
// instances call it at once. Single Redis (or a primary with replicas) only: the scripts touch several keys, which a
// Redis Cluster would spread over slots.
//
// Layout, under a prefix (default 'modelpub:'):
//   <prefix>key:<sha256>           hash  id, hash, label, created_at, revoked_at ('' while valid)
//   <prefix>ids                    hash  id -> sha256 (the list of keys, and revoke by id)
//   <prefix>quota:<day>:<key id>   int   units granted that day; expires 2 days after its last take
//
// Durability is Redis's own: with persistence off, a Redis restart forgets the day's counters and keys.
import { createHash } from 'node:crypto';
import type { Redis as RedisClient } from 'ioredis';
import { redactUrl } from './redact.js';
import { DuplicateKeyError, checkDay, checkTake, checkUnits, type KeyRecord, type QuotaStore } from './types.js';

export const DRIVER_NAME = 'redis';

export const DEFAULT_PREFIX = 'modelpub:';

/** Counters outlive their day by at least a day, for `granted()` on yesterday and for clocks a little apart. */
const COUNTER_TTL_SECONDS = 2 * 86_400;

export interface RedisStoreOptions {
  /** redis://[user:password@]host:port[/db] or rediss://... */
  url: string;
  /** Prepended to every Redis key, so several deployments (or tests) can share one Redis. Default 'modelpub:'. */
  prefix?: string;
  /** The database to use (SELECT): checked at open, so one the server does not have is an error, not database 0. */
  db?: number;
  /** Give up connecting after this many ms. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * Fail a command that has no answer after this many ms. Default 2000. Without it, a Redis that stops answering but
   * keeps its connection open (paused, swapping, a network partition) would hold every request that needs it.
   */
  commandTimeoutMs?: number;
}

const TAKE = `
local g = tonumber(redis.call('GET', KEYS[1]) or '0')
local t = math.min(tonumber(ARGV[1]), tonumber(ARGV[2]) - g)
if t < 0 then t = 0 end
if t > 0 then
  g = redis.call('INCRBY', KEYS[1], t)
  redis.call('EXPIRE', KEYS[1], ARGV[3])
end
return {t, g}`;

const RELEASE = `
local g = tonumber(redis.call('GET', KEYS[1]) or '0')
if g == 0 then return 0 end
local n = g - tonumber(ARGV[1])
if n < 0 then n = 0 end
redis.call('SET', KEYS[1], n, 'KEEPTTL')
return n`;

const CREATE_KEY = `
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 or redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'hash', ARGV[2], 'label', ARGV[3], 'created_at', ARGV[4], 'revoked_at', ARGV[5])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1`;

const REVOKE_KEY = `
local h = redis.call('HGET', KEYS[1], ARGV[1])
if not h then return false end
local k = ARGV[3] .. 'key:' .. h
if redis.call('HGET', k, 'revoked_at') == '' then redis.call('HSET', k, 'revoked_at', ARGV[2]) end
return redis.call('HGETALL', k)`;

async function loadDriver(): Promise<typeof RedisClient> {
  try {
    const mod = await import('ioredis');
    return mod.Redis ?? mod.default;
  } catch (e) {
    throw new Error(
      `Cannot import \`ioredis\`, which redis:// quota stores need: install it with \`npm install ioredis\`. (${(e as Error).message})`,
      { cause: e },
    );
  }
}

const fromHash = (h: Record<string, string>): KeyRecord | null =>
  h.id === undefined || h.hash === undefined
    ? null
    : {
        id: h.id,
        hash: h.hash,
        label: h.label ?? '',
        created_at: h.created_at ?? '',
        revoked_at: h.revoked_at ? h.revoked_at : null,
      };

const pairs = (flat: string[]): Record<string, string> => {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
};

export async function redisStore(opts: RedisStoreOptions): Promise<QuotaStore> {
  const Redis = await loadDriver();
  const prefix = opts.prefix ?? DEFAULT_PREFIX;
  const client = new Redis(opts.url, {
    lazyConnect: true,
    connectTimeout: opts.connectTimeoutMs ?? 5000,
    // A request waits for at most this many reconnection attempts before its quota check fails (the gateway answers
    // 503), rather than queueing forever while Redis is away.
    maxRetriesPerRequest: 2,
    commandTimeout: opts.commandTimeoutMs ?? 2000,
  });
  // Failed commands reject on their own; without a listener ioredis would also print every connection error.
  let lastError: Error | undefined;
  client.on('error', (e: Error) => {
    lastError = e;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (e) {
    client.disconnect();
    const why = lastError ?? (e as Error);
    throw new Error(`Cannot reach Redis at ${redactUrl(opts.url)}: ${why.message}`, { cause: why });
  }
  if (opts.db !== undefined) {
    // ioredis selects the URL's database on each connect, but goes on in database 0 when the server refuses it.
    await client.select(opts.db).catch((e: Error) => {
      client.disconnect();
      throw new Error(`Redis at ${redactUrl(opts.url)} has no database ${opts.db}: ${e.message}`, { cause: e });
    });
  }

  // EVALSHA, falling back to EVAL (which also caches the script) the first time, or after a SCRIPT FLUSH.
  const script = (lua: string) => {
    const sha = createHash('sha1').update(lua).digest('hex');
    return async (keys: string[], args: (string | number)[]): Promise<unknown> => {
      try {
        return await client.evalsha(sha, keys.length, ...keys, ...args);
      } catch (e) {
        if (!String((e as Error).message).startsWith('NOSCRIPT')) throw e;
        return await client.eval(lua, keys.length, ...keys, ...args);
      }
    };
  };
  const take = script(TAKE);
  const release = script(RELEASE);
  const createKey = script(CREATE_KEY);
  const revokeKey = script(REVOKE_KEY);

  const k = {
    key: (hash: string) => `${prefix}key:${hash}`,
    ids: `${prefix}ids`,
    quota: (keyId: string, day: string) => `${prefix}quota:${day}:${keyId}`,
  };

  return {
    driver: DRIVER_NAME,
    async createKey(rec) {
      const ok = await createKey(
        [k.key(rec.hash), k.ids],
        [rec.id, rec.hash, rec.label, rec.created_at, rec.revoked_at ?? ''],
      );
      if (ok !== 1) throw new DuplicateKeyError(rec.id);
    },
    async findKey(hash) {
      return fromHash(await client.hgetall(k.key(hash)));
    },
    async listKeys() {
      const hashes = Object.values(await client.hgetall(k.ids));
      if (hashes.length === 0) return [];
      const pipe = client.pipeline();
      for (const h of hashes) pipe.hgetall(k.key(h));
      const rows = (await pipe.exec()) ?? [];
      const out: KeyRecord[] = [];
      for (const [err, h] of rows) {
        if (err) throw err;
        const r = fromHash(h as Record<string, string>);
        if (r) out.push(r);
      }
      return out.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    },
    async revokeKey(id, at) {
      const flat = (await revokeKey([k.ids], [id, at, prefix])) as string[] | null;
      return flat ? fromHash(pairs(flat)) : null;
    },
    async take(keyId, day, want, limit) {
      checkDay(day);
      checkTake(want, limit);
      const [taken, granted] = (await take([k.quota(keyId, day)], [want, limit, COUNTER_TTL_SECONDS])) as [
        number,
        number,
      ];
      return { taken: Number(taken), granted: Number(granted) };
    },
    async release(keyId, day, units) {
      checkDay(day);
      checkUnits(units);
      if (units > 0) await release([k.quota(keyId, day)], [units]);
    },
    async granted(keyId, day) {
      checkDay(day);
      return Number((await client.get(k.quota(keyId, day))) ?? 0);
    },
    async close() {
      if (client.status === 'end') return;
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}
