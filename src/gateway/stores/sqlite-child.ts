// `sqlite:PATH` for a serving gateway: the store runs in a child process (sqlite-host.ts). SQLite maps the `-shm` file
// into memory, and a page of it that cannot be written (a file truncated or replaced by hand, a full disk under it)
// kills the process that touches it with SIGBUS, before any JavaScript can run: in the gateway itself that was every
// connection refused. Here the child dies instead; the calls it had answer with an error (the gateway answers 503,
// fail closed, and logs why), and a new child opens the store again after a second (SQLite rebuilds a `-shm` file
// it finds short). A take whose answer never came is lost with its units, as in a crash (docs/quota.md).
//
// The price: a store call is an IPC round trip (tens of µs) instead of a synchronous call that held the event loop for
// as long; the gateway makes about one per lease and caches keys, so requests do not see it.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HostAnswer, HostCall } from './sqlite-host.js';
import { sqliteStore, type SqliteStoreOptions } from './sqlite.js';
import { DuplicateKeyError, StoreDataLostError, type QuotaStore } from './types.js';

const HOST = fileURLToPath(new URL('./sqlite-host.js', import.meta.url));
/** How long after a child died a new one is started; doubled while opening fails, up to 10 s. */
const RESTART_MS = 1000;

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

/**
 * The store of `sqliteStore(opts)`, run in a child process. Where there is no compiled host to run (the TypeScript
 * sources imported by tests), the store runs in this process as before.
 */
export async function isolatedSqliteStore(opts: SqliteStoreOptions): Promise<QuotaStore> {
  if (opts.path === ':memory:' || !existsSync(HOST)) return sqliteStore(opts);
  const file = path.resolve(opts.path);
  let identity: { dev: number; ino: number } | undefined;
  let child: ChildProcess | null = null;
  let down: Error | null = null;
  let closed = false;
  let nextId = 0;
  let restartMs = RESTART_MS;
  const pending = new Map<number, Pending>();

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const c = fork(HOST, [JSON.stringify({ ...opts, path: file, identity })], {
        serialization: 'advanced',
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        execArgv: [],
      });
      let ready = false;
      c.on('message', (m: HostAnswer | { ready: true } | { failed: string }) => {
        if ('ready' in m) {
          ready = true;
          child = c;
          down = null;
          restartMs = RESTART_MS;
          resolve();
        } else if ('failed' in m) reject(new Error(m.failed));
        else settle(m);
      });
      c.on('error', (e) => {
        if (!ready) reject(e);
      });
      c.on('exit', (code, signal) => {
        if (!ready)
          return reject(new Error(`the SQLite store process for ${file} exited (${signal ?? code}) while opening it`));
        if (child === c) child = null;
        if (closed) return;
        const why = signal === 'SIGBUS' ? ': its -shm file could not be written, see docs/operations.md' : '';
        down = new Error(
          `the SQLite store process for ${file} died (${signal ?? `exit code ${code}`}${why}): ` +
            'requests that need the store answer 503 until a new one has opened it',
        );
        for (const [, p] of pending) p.reject(down);
        pending.clear();
        restartSoon();
      });
    });
  const restartSoon = () => {
    setTimeout(() => {
      if (closed) return;
      start().catch((e: Error) => {
        down = new Error(`the SQLite store ${file} could not be opened again: ${e.message}`, { cause: e });
        restartMs = Math.min(restartMs * 2, 10_000);
        restartSoon();
      });
    }, restartMs).unref();
  };
  const settle = (m: HostAnswer) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) return p.resolve(m.value);
    const { name, message, code, keyId } = m.error;
    const e =
      name === 'StoreDataLostError'
        ? new StoreDataLostError(message)
        : name === 'DuplicateKeyError'
          ? new DuplicateKeyError(keyId ?? '')
          : name === 'RangeError'
            ? new RangeError(message)
            : Object.assign(new Error(message), code ? { code } : {});
    p.reject(e);
  };
  const call = (op: HostCall['op'], ...args: unknown[]): Promise<never> =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new Error(`the SQLite store ${file} is closed`));
      if (!child || down) return reject(down ?? new Error(`the SQLite store process for ${file} is not running`));
      const id = ++nextId;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ id, op, args } satisfies HostCall);
    });

  await start().catch((e: Error) => {
    throw new Error(e.message, { cause: e });
  });
  const st = statSync(file);
  identity = { dev: st.dev, ino: st.ino };

  return {
    driver: 'sqlite',
    createKey: (rec) => call('createKey', rec),
    findKey: (hash) => call('findKey', hash),
    listKeys: () => call('listKeys'),
    revokeKey: (id, at) => call('revokeKey', id, at),
    take: (keyId, day, want, limit) => call('take', keyId, day, want, limit),
    release: (keyId, day, units) => call('release', keyId, day, units),
    granted: (keyId, day) => call('granted', keyId, day),
    ping: () => call('ping'),
    async close() {
      if (closed) return;
      const c = child;
      if (c) await call('close').catch(() => {});
      closed = true;
      if (c && c.exitCode === null && c.signalCode === null) {
        const exited = new Promise((r) => c.once('exit', r));
        c.disconnect();
        await exited;
      }
    },
  };
}
