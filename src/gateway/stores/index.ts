// Picks a quota store driver from a URL (`--store`): sqlite:PATH, redis://HOST:PORT, memory:.
import { existsSync } from 'node:fs';
import { UsageError } from '../../errors.js';
import { redactUrl } from './redact.js';
import type { QuotaStore } from './types.js';

export type { KeyRecord, QuotaStore, TakeResult } from './types.js';
export { DuplicateKeyError } from './types.js';
export { redactUrl } from './redact.js';

/** Keys and counters in a file beside the gateway, kept across restarts. */
export const DEFAULT_STORE_URL = 'sqlite:var/gateway.db';

const ACCEPTED = 'sqlite:PATH (e.g. sqlite:var/gateway.db, the default), redis://HOST:PORT[/DB][?prefix=P] (or rediss://), or memory:';

/**
 * Opens the store a URL names. The client library is imported only for the driver asked for.
 * - `sqlite:PATH`: PATH relative to the working directory, or absolute (`sqlite:/srv/gw.db`); the folder is created.
 * - `redis://...` / `rediss://...`: `?prefix=` sets the key prefix (default 'modelpub:'); other query options go to ioredis.
 * - `memory:`: this process only.
 * Throws UsageError for a URL of any other form, and with mustExist for an sqlite file that does not exist (commands
 * that only read or change existing keys must not create a store at a mistyped path).
 */
export async function openStore(url: string, { mustExist = false } = {}): Promise<QuotaStore> {
  if (url === 'memory:') {
    const { memoryStore } = await import('./memory.js');
    return memoryStore();
  }
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (file === '') throw new UsageError(`Store "sqlite:" names no file: use ${ACCEPTED}.`);
    if (file.startsWith('//')) throw new UsageError(`Store "${url}": write sqlite:PATH without "//", e.g. sqlite:/srv/gateway.db for an absolute path.`);
    if (mustExist && !existsSync(file)) throw new UsageError(`Store "${url}": there is no such file (\`modelpub keys create --store ${url}\` makes one).`);
    const { sqliteStore } = await import('./sqlite.js');
    return sqliteStore({ path: file }).catch((e: Error) => {
      throw new Error(`Store "${url}": ${e.message}`, { cause: e });
    });
  }
  if (url.startsWith('redis://') || url.startsWith('rediss://')) {
    const { redisStore } = await import('./redis.js');
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new UsageError(`Store "${redactUrl(url)}" is not a valid URL: use ${ACCEPTED}.`);
    }
    const prefix = u.searchParams.get('prefix') ?? undefined;
    u.searchParams.delete('prefix');
    return redisStore({ url: u.toString(), prefix });
  }
  throw new UsageError(`Unknown store "${redactUrl(url)}": use ${ACCEPTED}.`);
}
