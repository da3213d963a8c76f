// `redis://HOST:PORT[/DB]` (or rediss://): several gateway instances, on one machine or many, share one Redis.
// Every write is one Lua script, which Redis runs atomically, so take() can never grant past the limit however many
// instances call it at once. Single Redis (or a primary with replicas) only: the scripts touch several keys, which a
// Redis Cluster would spread over slots.
//
// Layout, under a prefix (default 'modelpub:'):
//   <prefix>key:<sha256>           hash  id, hash, label, created_at, revoked_at ('' while valid)
//   <prefix>ids                    hash  id -> sha256 (the list of keys, and revoke by id)
//   <prefix>quota:<day>:<key id>   int   units granted that day; expires 2 days after its last take
//   <prefix>issued:<day>:<key id>  int   units ever granted that day, never lowered by a release; same expiry
//   <prefix>generation             str   random, written by the first process to open the store; see below
//   <prefix>take:<id>              str   what one take or release did ("<units> <granted>", or "void"); 10 minutes
//
// Durability is Redis's own (docs/quota.md: appendonly yes). Two faults are handled here:
// - Redis lost its data (a restart without persistence, a FLUSHALL): every process adopts the generation when it
//   opens the store, and every take and release checks it in the same script. A Redis that no longer holds it fails
//   them all with StoreDataLostError until the gateways restart (fail closed: the day's counters are gone, and with
//   them what was already admitted).
// - Redis went back in time (restarted from an RDB snapshot older than the last takes, Debian's default persistence):
//   the generation is there but the day's counters are older. Each process keeps the highest `issued` it has seen
//   per key and day, and every take checks it in the script: a stored count lower than that fails the take and the
//   process as above, after raising the day's counters by what they lack of it, so what this process knows was
//   granted is never granted again, by any process.
// - A take whose answer never came (Redis paused, a connection dropped): takes run on a connection of their own
//   without a command timeout, so a slow answer still arrives and its units are used; the limiter stops waiting for
//   it (quota.ts) but starts no other take for that key meanwhile. A take resent after a reconnect is recognised by
//   its id and not applied twice. One whose connection failed for good is named to the next take for the same key
//   and day, which in one script claims its units if it ran, or voids it so that it can never run later.
import { createHash, randomBytes } from 'node:crypto';
import type { Redis as RedisClient } from 'ioredis';
import { redactUrl } from '../../redact.js';
import {
  DuplicateKeyError,
  StoreDataLostError,
  checkDay,
  checkTake,
  checkUnits,
  type KeyRecord,
  type QuotaStore,
} from './types.js';

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

/** How long the record of a take or release is kept: a resend or a later take's claim comes well within it. */
const RECORD_TTL_SECONDS = 600;

const GENERATION_LOST = 'MODELPUB_GENERATION_LOST';
const WENT_BACK = 'MODELPUB_COUNTER_WENT_BACK';

/** KEYS: generation. ARGV: a new random generation. Returns the generation in force. */
const INIT = `
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`;

/**
 * KEYS: counter, generation, this take's record, issued, records of earlier takes of this key and day whose answer
 * never came. ARGV: want, limit, counter ttl, generation, record ttl, the highest issued this process has seen.
 * Returns {units handed to the caller, granted, issued}.
 */
const TAKE = `
if redis.call('GET', KEYS[2]) ~= ARGV[4] then return redis.error_reply('${GENERATION_LOST}') end
local issued = tonumber(redis.call('GET', KEYS[4]) or '0')
local floor = tonumber(ARGV[6])
if issued < floor then
  local lack = floor - issued
  redis.call('INCRBY', KEYS[1], lack)
  redis.call('EXPIRE', KEYS[1], ARGV[3])
  redis.call('SET', KEYS[4], floor, 'EX', ARGV[3])
  return redis.error_reply('${WENT_BACK} ' .. issued)
end
local done = redis.call('GET', KEYS[3])
if done then
  if done == 'void' then return {0, tonumber(redis.call('GET', KEYS[1]) or '0'), issued} end
  local t, g = string.match(done, '^(%d+) (%d+)$')
  return {tonumber(t), tonumber(g), issued}
end
local claimed = 0
for i = 5, #KEYS do
  local earlier = redis.call('GET', KEYS[i])
  if earlier and earlier ~= 'void' then claimed = claimed + tonumber(string.match(earlier, '^(%d+)')) end
  redis.call('SET', KEYS[i], 'void', 'EX', ARGV[5])
end
local g = tonumber(redis.call('GET', KEYS[1]) or '0')
local t = math.min(tonumber(ARGV[1]), tonumber(ARGV[2]) - g)
if t < 0 then t = 0 end
if t > 0 then
  g = redis.call('INCRBY', KEYS[1], t)
  redis.call('EXPIRE', KEYS[1], ARGV[3])
  issued = redis.call('INCRBY', KEYS[4], t)
  redis.call('EXPIRE', KEYS[4], ARGV[3])
end
redis.call('SET', KEYS[3], (t + claimed) .. ' ' .. g, 'EX', ARGV[5])
return {t + claimed, g, issued}`;

/** KEYS: counter, generation, this release's record. ARGV: units, generation, record ttl. */
const RELEASE = `
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return redis.error_reply('${GENERATION_LOST}') end
if redis.call('SET', KEYS[3], 'done', 'NX', 'EX', ARGV[3]) == false then return -1 end
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

  // Takes and releases: a connection of their own without a command timeout (see the top of this file). Its
  // commands are resent after a reconnect; the scripts' records make that harmless.
  const quotaClient = client.duplicate({ commandTimeout: undefined });
  quotaClient.on('error', () => {
    /* told by the commands that fail */
  });
  const closeAll = async () => {
    for (const c of [client, quotaClient]) {
      if (c.status === 'end') continue;
      // QUIT waits for an answer, which a paused Redis never gives.
      await Promise.race([c.quit(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]).catch(() => {});
      c.disconnect();
    }
  };

  // EVALSHA, falling back to EVAL (which also caches the script) the first time, or after a SCRIPT FLUSH.
  const script = (lua: string, on: RedisClient = client) => {
    const sha = createHash('sha1').update(lua).digest('hex');
    return async (keys: string[], args: (string | number)[]): Promise<unknown> => {
      try {
        return await on.evalsha(sha, keys.length, ...keys, ...args);
      } catch (e) {
        if (!String((e as Error).message).startsWith('NOSCRIPT')) throw e;
        return await on.eval(lua, keys.length, ...keys, ...args);
      }
    };
  };
  const take = script(TAKE, quotaClient);
  const release = script(RELEASE, quotaClient);
  const createKey = script(CREATE_KEY);
  const revokeKey = script(REVOKE_KEY);

  const k = {
    key: (hash: string) => `${prefix}key:${hash}`,
    ids: `${prefix}ids`,
    quota: (keyId: string, day: string) => `${prefix}quota:${day}:${keyId}`,
    issued: (keyId: string, day: string) => `${prefix}issued:${day}:${keyId}`,
    generation: `${prefix}generation`,
    record: (id: string) => `${prefix}take:${id}`,
  };

  let generation: string;
  const warnings: string[] = [];
  try {
    await quotaClient.connect();
    generation = String(await script(INIT)([k.generation], [randomBytes(12).toString('base64url')]));
    warnings.push(...(await persistenceWarnings(client, redactUrl(opts.url))));
  } catch (e) {
    await closeAll();
    throw new Error(`Redis at ${redactUrl(opts.url)}: ${(e as Error).message}`, { cause: e });
  }

  const lostError = () =>
    new StoreDataLostError(
      `Redis at ${redactUrl(opts.url)} lost its data (its generation key ${k.generation} is gone or changed since ` +
        'this gateway started): every request is refused until the gateway restarts; see docs/quota.md, "When Redis ' +
        'loses its data"',
    );
  const wentBackError = (keyId: string, day: string, stored: string, seen: number) =>
    new StoreDataLostError(
      `Redis at ${redactUrl(opts.url)} went back in time: it counts ${stored} units ever granted to key ${keyId} on ` +
        `${day}, fewer than the ${seen} this gateway saw (a restart from an RDB snapshot older than the last takes, ` +
        'without appendonly yes?): the counters were raised to what this gateway saw, and every request is refused ' +
        'until the gateway restarts; see docs/quota.md, "When Redis loses its data"',
    );
  let lost: StoreDataLostError | null = null;
  const checked = async <T>(run: () => Promise<T>, wentBack?: (stored: string) => StoreDataLostError): Promise<T> => {
    if (lost) throw lost;
    try {
      return await run();
    } catch (e) {
      const message = String((e as Error).message);
      if (message.includes(GENERATION_LOST)) throw (lost = lostError());
      const back = new RegExp(`${WENT_BACK} (\\d+)`).exec(message);
      if (back && wentBack) throw (lost = wentBack(back[1]!));
      throw e;
    }
  };
  /** The highest `issued` seen per `<day> <key id>`, of the days this process takes for (see the top). */
  const floors = new Map<string, number>();
  let floorsDay = '';
  /** Takes of a key and day whose answer never came, by `<day> <key id>`: the next take claims or voids them. */
  const unanswered = new Map<string, string[]>();

  return {
    driver: DRIVER_NAME,
    warnings,
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
      const slot = `${day} ${keyId}`;
      const earlier = unanswered.get(slot) ?? [];
      const id = randomBytes(12).toString('base64url');
      if (day > floorsDay) {
        // Yesterday's floors are kept for takes of a day just over; older ones are never needed again.
        for (const key of floors.keys()) if (key < floorsDay) floors.delete(key);
        floorsDay = day;
      }
      const floor = floors.get(slot) ?? 0;
      try {
        const [taken, granted, issued] = (await checked(
          () =>
            take(
              [k.quota(keyId, day), k.generation, k.record(id), k.issued(keyId, day), ...earlier.map(k.record)],
              [want, limit, COUNTER_TTL_SECONDS, generation, RECORD_TTL_SECONDS, floor],
            ),
          (stored) => wentBackError(keyId, day, stored, floor),
        )) as [number, number, number];
        unanswered.delete(slot);
        if (Number(issued) > (floors.get(slot) ?? 0)) floors.set(slot, Number(issued));
        return { taken: Number(taken), granted: Number(granted) };
      } catch (e) {
        // It may have run: the next take of this key and day settles it (the oldest are dropped past 16).
        if (!(e instanceof StoreDataLostError)) unanswered.set(slot, [...earlier, id].slice(-16));
        throw e;
      }
    },
    async release(keyId, day, units) {
      checkDay(day);
      checkUnits(units);
      if (units === 0) return;
      const id = randomBytes(12).toString('base64url');
      await checked(() =>
        release([k.quota(keyId, day), k.generation, k.record(id)], [units, generation, RECORD_TTL_SECONDS]),
      );
    },
    async granted(keyId, day) {
      checkDay(day);
      return Number((await client.get(k.quota(keyId, day))) ?? 0);
    },
    async ping() {
      if (lost) throw lost;
      if ((await client.get(k.generation)) !== generation) throw (lost = lostError());
    },
    close: closeAll,
  };
}

/**
 * What the operator should hear about this Redis's persistence (docs/quota.md): without the append-only file, a
 * restart forgets the day's counters and the keys, or, with RDB snapshots alone (Debian's default), takes them back to
 * the last snapshot. CONFIG may be disabled (managed services rename it): then say so.
 */
async function persistenceWarnings(client: RedisClient, where: string): Promise<string[]> {
  let appendonly: string | undefined;
  let save: string | undefined;
  try {
    appendonly = ((await client.config('GET', 'appendonly')) as string[])[1];
    save = ((await client.config('GET', 'save')) as string[])[1];
  } catch (e) {
    return [
      `cannot check the persistence of Redis at ${where} (CONFIG GET refused: ${(e as Error).message}): make sure it ` +
        'runs with appendonly yes (docs/quota.md)',
    ];
  }
  if (appendonly === 'yes') return [];
  if (save)
    return [
      `Redis at ${where} runs with appendonly ${appendonly ?? 'unknown'} and RDB snapshots only (save "${save}"): a ` +
        `crash or restart takes the day's quota counters and the keys back to the last snapshot, minutes old, and every ` +
        `unit granted since would be granted again. Redis's own guidance for data you cannot lose is the append-only ` +
        'file: set appendonly yes. Until then, a gateway that sees a counter go back refuses every request until ' +
        'restarted (docs/quota.md)',
    ];
  return [
    `Redis at ${where} runs with appendonly ${appendonly ?? 'unknown'} and no snapshots: a restart can forget today's ` +
      'quota counters and the keys, and the gateways then refuse every request until restarted; set appendonly yes (docs/quota.md)',
  ];
}
