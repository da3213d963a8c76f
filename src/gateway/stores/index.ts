// Picks a quota store driver from a URL (`--store`): sqlite:PATH, redis://HOST:PORT, memory:.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../errors.js';
import { redactUrl } from '../../redact.js';
import { DuplicateKeyError, StoreDataLostError, type QuotaStore } from './types.js';

export type { KeyRecord, QuotaStore, TakeResult } from './types.js';
export { DuplicateKeyError } from './types.js';
export { redactUrl } from '../../redact.js';

/** Keys and counters in a file beside the gateway, kept across restarts. */
export const DEFAULT_STORE_URL = 'sqlite:var/gateway.db';

const ACCEPTED =
  'sqlite:PATH (e.g. sqlite:var/gateway.db, the default), redis://HOST:PORT[/DB][?prefix=P] (or rediss://), or memory:';

/**
 * Opens the store a URL names. The client library is imported only for the driver asked for.
 * - `sqlite:PATH`: PATH relative to the working directory, or absolute (`sqlite:/srv/gw.db`); the folder is created.
 * - `redis://...` / `rediss://...`: `/DB` picks the database (0 by default); `?prefix=` sets the key prefix, used as
 *   given (default 'modelpub:'); no other query option is taken.
 * - `memory:`: this process only.
 * Throws UsageError for a URL of any other form, and with mustExist for an sqlite file that does not exist (commands
 * that only read or change existing keys must not create a store at a mistyped path). With isolate, an sqlite store
 * runs in a child process (sqlite-child.ts): what a serving gateway wants.
 */
export async function openStore(url: string, { mustExist = false, isolate = false } = {}): Promise<QuotaStore> {
  if (url === 'memory:') {
    const { memoryStore } = await import('./memory.js');
    return memoryStore();
  }
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (file === '') throw new UsageError(`Store "sqlite:" names no file: use ${ACCEPTED}.`);
    if (file.startsWith('//'))
      throw new UsageError(
        `Store "${url}": write sqlite:PATH without "//", e.g. sqlite:/srv/gateway.db for an absolute path.`,
      );
    if (mustExist && !existsSync(file))
      throw new UsageError(
        `Store "${url}": there is no such file (\`modelpub keys create --store ${url}\` makes one).`,
      );
    // A serving gateway runs SQLite in a child process, which a SIGBUS on its -shm file kills instead of the gateway.
    const open = isolate
      ? (await import('./sqlite-child.js')).isolatedSqliteStore
      : (await import('./sqlite.js')).sqliteStore;
    return open({ path: file }).then(
      (store) => naming(store, 'the SQLite store', path.resolve(file)),
      (e: Error) => {
        throw new Error(`Store "${url}": ${e.message}`, { cause: e });
      },
    );
  }
  if (url.startsWith('redis://') || url.startsWith('rediss://')) {
    const { redisStore } = await import('./redis.js');
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new UsageError(`Store "${redactUrl(url)}" is not a valid URL: use ${ACCEPTED}.`);
    }
    // ioredis reads the database from the path and options from the query, and quietly falls back to database 0 for
    // a path it cannot use: keys and counters would land beside another application's data.
    const db =
      u.pathname === '' || u.pathname === '/' ? 0 : /^\/\d{1,9}$/.test(u.pathname) ? Number(u.pathname.slice(1)) : NaN;
    if (Number.isNaN(db))
      throw new UsageError(
        `Store "${redactUrl(url)}": the database is a whole number, as in redis://HOST:PORT/0, not "${u.pathname.slice(1)}".`,
      );
    const unknown = [...u.searchParams.keys()].filter((k) => k !== 'prefix');
    if (unknown.length)
      throw new UsageError(
        `Store "${redactUrl(url)}": unknown option ${unknown.map((k) => `"${k}"`).join(', ')}; the one option is ?prefix=P.`,
      );
    const prefix = u.searchParams.get('prefix') ?? undefined;
    u.searchParams.delete('prefix');
    return naming(await redisStore({ url: u.toString(), prefix, db }), 'Redis at', redactUrl(url));
  }
  const scheme = /^(sqlite|redis|rediss|memory):/i.exec(url)?.[1];
  if (scheme)
    throw new UsageError(
      `Store "${redactUrl(url)}": write the scheme in lower case, ${scheme.toLowerCase()}:, as in ${ACCEPTED}.`,
    );
  throw new UsageError(`Unknown store "${redactUrl(url)}": use ${ACCEPTED}.`);
}

/**
 * The store with every failure naming it: a driver's own errors are often bare ("database or disk is full",
 * "Connection is closed."), and they reach the request log and the CLI. Errors that already say where, or that
 * are the store's own verdicts (lost data, a duplicate key, a bad argument), pass as they are.
 */
export function naming(store: QuotaStore, what: string, where: string): QuotaStore {
  const named = (e: unknown): never => {
    if (
      !(e instanceof Error) ||
      e instanceof StoreDataLostError ||
      e instanceof DuplicateKeyError ||
      e instanceof RangeError ||
      e.message.includes(where)
    )
      throw e;
    throw Object.assign(new Error(`${what} ${where}: ${e.message}`, { cause: e }), 'code' in e ? { code: e.code } : {});
  };
  const wrapped = { ...store } as Record<string, unknown>;
  for (const op of ['createKey', 'findKey', 'listKeys', 'revokeKey', 'take', 'release', 'granted', 'ping'] as const) {
    const run = store[op].bind(store) as (...a: unknown[]) => Promise<unknown>;
    wrapped[op] = (...a: unknown[]) => run(...a).catch(named);
  }
  return wrapped as unknown as QuotaStore;
}
