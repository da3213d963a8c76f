// `sqlite:PATH`: the embedded default (sqlite:var/gateway.db). Keys and counters survive a restart, and several
// gateway processes on one machine can share the file: every take() runs in a BEGIN IMMEDIATE transaction, which holds
// SQLite's single write lock from before it reads the counter until it has written it, so two processes can never
// both grant the same unit.
//
// Durability: WAL with synchronous=NORMAL. A killed process loses nothing it committed (the WAL is in the OS's hands
// at commit); only a power loss or kernel crash can forget the last commits, and with them grants already admitted.
// better-sqlite3 is synchronous: a take() blocks the event loop for its few microseconds, or up to busy_timeout while
// another process holds the write lock. The limiter (../quota.ts) calls take() about once per lease, not per request.
import { closeSync, constants, openSync, statSync } from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { makeDirs } from '../../make-dirs.js';
import {
  DuplicateKeyError,
  StoreDataLostError,
  checkDay,
  checkTake,
  checkUnits,
  previousDay,
  type KeyRecord,
  type QuotaStore,
  type TakeResult,
} from './types.js';

export const DRIVER_NAME = 'sqlite';

const SCHEMA_VERSION = 1;

export interface SqliteStoreOptions {
  /** Database file; its parent folder is created. ':memory:' gives a private in-memory database. */
  path: string;
  /** How long to wait for another process's write lock before failing, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * The file this gateway opened first, when the store is opened again in a new process (sqlite-child.ts): a file
   * deleted or replaced in between is then still noticed.
   */
  identity?: { dev: number; ino: number };
}

async function loadDriver(): Promise<typeof BetterSqlite3> {
  try {
    return (await import('better-sqlite3')).default;
  } catch (e) {
    throw new Error(
      `Cannot import \`better-sqlite3\`, which sqlite: quota stores need: install it with \`npm install ` +
        `better-sqlite3\`. (${(e as Error).message})`,
      { cause: e },
    );
  }
}

interface KeyRow {
  id: string;
  hash: string;
  label: string;
  created_at: string;
  revoked_at: string | null;
}
const record = (r: KeyRow): KeyRecord => ({
  id: r.id,
  hash: r.hash,
  label: r.label,
  created_at: r.created_at,
  revoked_at: r.revoked_at,
});

/**
 * The database, or an error that says why not: SQLite's own is "unable to open database file", which names neither
 * the file nor the reason. open(2) of the same file, as SQLite does it, gives both (EACCES, EISDIR, EROFS...).
 */
function openDatabase(Database: typeof BetterSqlite3, file: string): BetterSqlite3.Database {
  try {
    return new Database(file);
  } catch (e) {
    if ((e as { code?: string }).code !== 'SQLITE_CANTOPEN') throw e;
    try {
      closeSync(openSync(file, constants.O_RDWR | constants.O_CREAT));
    } catch (why) {
      const err = why as NodeJS.ErrnoException;
      const what = err.message.replace(`${err.code}: `, '').replace(/, open .*$/, '');
      throw new Error(`cannot open ${file}: ${what} (${err.code})`, { cause: e });
    }
    throw new Error(`cannot open ${file}: ${(e as Error).message}`, { cause: e });
  }
}

export async function sqliteStore(opts: SqliteStoreOptions): Promise<QuotaStore> {
  const Database = await loadDriver();
  const file = opts.path === ':memory:' ? opts.path : path.resolve(opts.path);
  if (file !== ':memory:') makeDirs(path.dirname(file));
  const db = openDatabase(Database, file);
  const busyTimeoutMs = Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000));
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // Turning a new file to WAL can fail with SQLITE_BUSY at once, without SQLite's busy handler, while another process
    // opens it too (--workers N on a new store): retry for as long as busy_timeout would have waited.
    for (const until = Date.now() + busyTimeoutMs; ; ) {
      try {
        db.pragma('journal_mode = WAL');
        break;
      } catch (e) {
        if ((e as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= until) throw e;
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
      }
    }
    db.pragma('synchronous = NORMAL');
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION)
      throw new Error(
        `${file} was written by a newer modelpub (quota store schema ${version}; this one knows ${SCHEMA_VERSION}).`,
      );
    db.transaction(() => {
      db.exec(`
        CREATE TABLE IF NOT EXISTS keys (
          id TEXT PRIMARY KEY,
          hash TEXT NOT NULL UNIQUE,
          label TEXT NOT NULL,
          created_at TEXT NOT NULL,
          revoked_at TEXT
        );
        CREATE TABLE IF NOT EXISTS quota (
          key_id TEXT NOT NULL,
          day TEXT NOT NULL,
          granted INTEGER NOT NULL,
          PRIMARY KEY (key_id, day)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS quota_day ON quota (day);
      `);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
  } catch (e) {
    db.close();
    throw e;
  }

  const q = {
    insertKey: db.prepare<[string, string, string, string, string | null]>(
      'INSERT INTO keys (id, hash, label, created_at, revoked_at) VALUES (?, ?, ?, ?, ?)',
    ),
    keyByHash: db.prepare<[string], KeyRow>('SELECT id, hash, label, created_at, revoked_at FROM keys WHERE hash = ?'),
    keyById: db.prepare<[string], KeyRow>('SELECT id, hash, label, created_at, revoked_at FROM keys WHERE id = ?'),
    allKeys: db.prepare<[], KeyRow>('SELECT id, hash, label, created_at, revoked_at FROM keys ORDER BY created_at, id'),
    revoke: db.prepare<[string, string]>('UPDATE keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    granted: db.prepare<[string, string], { granted: number }>(
      'SELECT granted FROM quota WHERE key_id = ? AND day = ?',
    ),
    setGranted: db.prepare<[string, string, number]>(
      'INSERT INTO quota (key_id, day, granted) VALUES (?, ?, ?) ON CONFLICT (key_id, day) DO UPDATE SET granted = excluded.granted',
    ),
    release: db.prepare<[number, string, string]>(
      'UPDATE quota SET granted = max(0, granted - ?) WHERE key_id = ? AND day = ?',
    ),
    prune: db.prepare<[string]>('DELETE FROM quota WHERE day < ?'),
    ping: db.prepare<[]>('SELECT count(*) FROM keys'),
  };

  const take = db.transaction((keyId: string, day: string, want: number, limit: number): TakeResult => {
    const before = q.granted.get(keyId, day)?.granted ?? 0;
    const taken = Math.max(0, Math.min(want, limit - before));
    if (taken > 0) q.setGranted.run(keyId, day, before + taken);
    return { taken, granted: before + taken };
  });
  const revoke = db.transaction((id: string, at: string): KeyRow | undefined => {
    q.revoke.run(at, id);
    return q.keyById.get(id);
  });

  // A file deleted (or replaced) under a running gateway: its open handle still reads and writes the old inode, which
  // no other process and no restart will ever see, so every take would count quota nowhere. Checked by one stat(2)
  // per store call (a take is about one per lease; key lookups are cached); once seen, every call fails until a
  // restart (fail closed), each failed request logging why.
  const identity = file === ':memory:' ? null : (opts.identity ?? statSync(file));
  let lost: StoreDataLostError | null = null;
  const present = () => {
    if (identity === null) return;
    if (lost) throw lost;
    const now = statSync(file, { throwIfNoEntry: false });
    if (now && now.ino === identity.ino && now.dev === identity.dev) return;
    lost = new StoreDataLostError(
      `the SQLite store ${file} was ${now ? 'replaced' : 'deleted'} while this gateway was serving: every request is ` +
        'refused until the gateway restarts (it then opens the file as it is; docs/operations.md)',
    );
    throw lost;
  };

  // Counters of days before yesterday are never read again: drop them the first time this process sees a new day.
  let prunedFor = '';
  const prune = (day: string) => {
    if (day <= prunedFor) return;
    prunedFor = day;
    q.prune.run(previousDay(day));
  };

  return {
    driver: DRIVER_NAME,
    async createKey(rec) {
      try {
        q.insertKey.run(rec.id, rec.hash, rec.label, rec.created_at, rec.revoked_at);
      } catch (e) {
        if ((e as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT')) throw new DuplicateKeyError(rec.id);
        throw e;
      }
    },
    async findKey(hash) {
      present();
      const r = q.keyByHash.get(hash);
      return r ? record(r) : null;
    },
    async listKeys() {
      return q.allKeys.all().map(record);
    },
    async revokeKey(id, at) {
      const r = revoke.immediate(id, at);
      return r ? record(r) : null;
    },
    async take(keyId, day, want, limit) {
      checkDay(day);
      checkTake(want, limit);
      present();
      const result = take.immediate(keyId, day, want, limit);
      if (day > prunedFor) prune(day);
      return result;
    },
    async release(keyId, day, units) {
      checkDay(day);
      checkUnits(units);
      present();
      if (units > 0) q.release.run(units, keyId, day);
    },
    async granted(keyId, day) {
      checkDay(day);
      return q.granted.get(keyId, day)?.granted ?? 0;
    },
    async ping() {
      present();
      q.ping.get();
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
