// The child process sqlite-child.ts runs the SQLite store in: it opens the store and answers the gateway's calls over
// the IPC channel. SQLite maps the `-shm` file into memory, and a page of it that cannot be written (truncated, a full
// disk) kills the process that touches it with SIGBUS: this one, not the gateway. It exits when the channel closes,
// so it never outlives its gateway, however the gateway ended.
import { sqliteStore, type SqliteStoreOptions } from './sqlite.js';
import type { QuotaStore } from './types.js';

export type HostCall = { id: number; op: keyof QuotaStore & string; args: unknown[] };
export type HostAnswer =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { name: string; message: string; code?: string; keyId?: string } };

const send = (m: unknown) => process.send?.(m);

process.on('disconnect', () => process.exit(0));

const opts = JSON.parse(process.argv[2] ?? '{}') as SqliteStoreOptions;
sqliteStore(opts).then(
  (store) => {
    process.on('message', (m: HostCall) => {
      const run = (store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[m.op];
      if (typeof run !== 'function')
        return send({ id: m.id, ok: false, error: { name: 'Error', message: `no op ${m.op}` } });
      run.apply(store, m.args).then(
        (value) => send({ id: m.id, ok: true, value }),
        (e: Error & { code?: string; id?: string }) =>
          send({ id: m.id, ok: false, error: { name: e.name, message: e.message, code: e.code, keyId: e.id } }),
      );
    });
    send({ ready: true });
  },
  (e: Error) => {
    send({ failed: e.message });
    process.exit(1);
  },
);
