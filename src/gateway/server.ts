// Wires a gateway together: origin -> live publication (polled, switched without a restart), key cache, quota
// limiter, logger, node:http server; optionally several worker processes on one port (node:cluster).
import cluster from 'node:cluster';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { destination, pino } from 'pino';
import { UsageError } from '../errors.js';
import { outDirState } from '../publication/folder.js';
import { createHandler, type RequestLog } from './app.js';
import { onClientError } from './client-errors.js';
import { fingerprint, KeyCache } from './keys.js';
import { dirOrigin } from './origins/dir.js';
import { remoteOrigin } from './origins/remote.js';
import type { Origin } from './origins/types.js';
import { BodyCache, Publication } from './publication.js';
import { QuotaLimiter } from './quota.js';
import { openStore } from './stores/index.js';
import type { QuotaStore } from './stores/types.js';
import type { RemoteOptions } from '../publish/targets/index.js';

export interface GatewayOptions {
  dir?: string;
  /** A remote publication (http(s)://, s3:// or file://, in the layout `modelpub publish` writes) instead of dir. */
  origin?: string;
  /** For an s3:// origin: --endpoint, --region, path style. */
  originOptions?: RemoteOptions;
  port: number;
  host: string;
  store: string;
  /** Requests per key per UTC day. */
  quota: number;
  cacheBytes: number;
  pollMs: number;
  /** 'info' logs one line per request; 'silent' logs nothing. */
  logLevel: 'info' | 'warn' | 'silent';
  /** An already open store (tests share one with the code that creates keys); not closed by the gateway. */
  storeInstance?: QuotaStore;
}

export interface RunningGateway {
  url: string;
  server: Server;
  publication(): Publication;
  close(): Promise<void>;
}

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const origin: Origin = o.origin ? await remoteOrigin(o.origin, o.originOptions) : dirOrigin(o.dir ?? 'dist');
  const cache = new BodyCache(o.cacheBytes);
  let current = await origin
    .currentId()
    .then((id) => Publication.load(origin, id, cache))
    .catch(async (e: Error & { code?: string }) => {
      await origin.close();
      throw new Error(
        `no publication to serve at ${origin.description}: ${e.message}.${o.origin || (e.code !== 'ENOENT' && e.code !== 'ENOTDIR') ? '' : await dirHint(o.dir ?? 'dist')}`,
      );
    });
  const log =
    o.logLevel === 'silent'
      ? null
      : pino({ level: o.logLevel, base: { pid: process.pid } }, destination({ sync: false }));
  const store = o.storeInstance ?? (await openStore(o.store));
  const keys = new KeyCache(store);
  const quota = new QuotaLimiter(store, { limit: o.quota });

  // Poll for a new publication; a failed load keeps the current one serving. A request that could not read the
  // publication polls early: two builds in one poll interval delete the release being served. Early polls come at
  // most one second after the last poll ended, so a store outage (every request fails) or a publication that will
  // not load (a 21 MB manifest) is not polled back to back.
  let polling = false;
  let lastPollEnd = -Infinity;
  const poll = async () => {
    if (polling) return;
    polling = true;
    try {
      const id = await origin.currentId();
      if (id !== current.id) {
        current = await Publication.load(origin, id, cache);
        log?.info({ revision: current.revision }, 'switched to a new publication');
      }
    } catch (e) {
      log?.warn({ err: String(e) }, 'publication poll failed; still serving the current one');
    } finally {
      polling = false;
      lastPollEnd = performance.now();
    }
  };
  const pollEarly = () => {
    if (performance.now() - lastPollEnd >= 1000) void poll();
  };
  const pollTimer = setInterval(poll, o.pollMs);
  pollTimer.unref();

  const handler = createHandler({
    publication: () => current,
    keys,
    quota,
    log: log as RequestLog | null,
    fingerprint,
    onUnavailable: pollEarly,
  });
  const server = createServer({ maxHeaderSize: 16 * 1024, requestTimeout: 30_000 }, handler);
  server.keepAliveTimeout = 65_000;
  server.on('clientError', onClientError(log));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: Error & { code?: string }) => {
      const why =
        e.code === 'EADDRINUSE'
          ? 'the address is in use'
          : e.code === 'EACCES'
            ? 'not permitted'
            : e.code === 'EADDRNOTAVAIL'
              ? 'no such local address'
              : e.message;
      reject(new Error(`cannot listen on ${o.host}:${o.port} (--host, --port): ${why}`, { cause: e }));
    });
    server.listen(o.port, o.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    server,
    publication: () => current,
    async close() {
      clearInterval(pollTimer);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await quota.close();
      if (!o.storeInstance) await store.close();
      await origin.close();
      log?.flush();
    },
  };
}

/**
 * What to do about a --dir without a publication (a file it needs is missing; a file that is there but unreadable
 * says so itself): build one there only if a build may write there (the build's own rule, outDirState).
 */
async function dirHint(dir: string): Promise<string> {
  const s = await outDirState(dir).catch(() => null);
  switch (s?.kind) {
    case 'missing':
    case 'ours':
      return ` Run \`modelpub build --out ${dir}\` first.`;
    case 'not-a-folder':
      return ' --dir names a file: give the folder a build wrote (its --out), or one of its releases.';
    case 'foreign':
      return ' That folder holds other files: give the folder a build wrote (its --out), or one of its releases.';
    default:
      return ''; // a path through a file, a link to nothing, a folder it may not read: the error above says enough
  }
}

/** A worker's start failure, as it tells the primary. */
interface StartFailure {
  failed: string;
  usage: boolean;
}

/**
 * Run `workers` processes sharing one port; each holds its own leases against the shared store. A worker that cannot
 * start (a port in use, no publication, the store out of reach) stops them all while the cluster is starting: the
 * primary prints its error once and exits as a single process would (2 for a mistake in the command, else 1). Once it
 * serves, a worker that dies is replaced, and a replacement that cannot start is tried again, later and later (up to
 * every 30 s), while the others go on serving.
 */
export async function startCluster(o: GatewayOptions, workers: number, announce: (url: string) => void): Promise<void> {
  if (cluster.isPrimary) {
    if (o.store.startsWith('memory:'))
      throw new UsageError('--workers needs a shared store (sqlite:PATH or redis://HOST:PORT), not memory:');
    let ready = 0;
    let url = '';
    let stopping = false;
    let exitCode = 0;
    let retryMs = 0; // the wait before replacing a worker; doubles while replacements fail to start
    for (let i = 0; i < workers; i++) cluster.fork();
    // Each worker closes as a single process does (its unspent leases go back to the store); the primary exits once
    // they all have. The signal goes to the worker's process itself: Worker.kill() disconnects it first, and a
    // disconnected worker exits at once, without closing.
    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      exitCode = code;
      const live = Object.values(cluster.workers ?? {});
      if (live.length === 0) process.exit(exitCode);
      for (const w of live) w?.process.kill('SIGTERM');
      setTimeout(() => process.exit(1), 30_000).unref(); // a worker stuck in close does not hold the primary forever
    };
    const startFailed = (why: string, code: number) => {
      if (stopping) return;
      console.error(`modelpub: ${why}`);
      stop(code);
    };
    cluster.on('message', (w, msg: { listening?: string } & Partial<StartFailure>) => {
      if (msg?.failed !== undefined) {
        if (!url) startFailed(msg.failed, msg.usage ? 2 : 1);
        else console.error(`a replacement worker (${w.process.pid}) could not start: ${msg.failed}`);
      } else if (msg?.listening) {
        retryMs = 0;
        if (++ready === workers) announce((url = msg.listening));
      }
    });
    cluster.on('exit', (w, code, signal) => {
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
        return;
      }
      // Before every worker listens, an exit is a start that failed. The worker said why, unless it crashed: its
      // message, sent just before it exited, is given a moment to arrive first.
      if (!url)
        return void setTimeout(
          () => startFailed(`a gateway worker exited before it was listening (${signal ?? `exit code ${code}`})`, 1),
          200,
        );
      retryMs = Math.min(30_000, retryMs ? 2 * retryMs : 1000);
      console.error(`worker ${w.process.pid} exited (${signal ?? code}); starting another in ${retryMs / 1000} s`);
      setTimeout(() => stopping || cluster.fork(), retryMs);
    });
    process.on('SIGTERM', () => stop(0));
    process.on('SIGINT', () => stop(0));
    return;
  }
  let g: RunningGateway;
  try {
    g = await startGateway(o);
  } catch (e) {
    // The primary prints it (once for all workers) and decides; the IPC channel would keep this process alive.
    const failure: StartFailure = {
      failed: (process.env.MODELPUB_DEBUG && (e as Error).stack) || (e as Error).message,
      usage: e instanceof UsageError,
    };
    process.send?.(failure, () => process.exit(1));
    return;
  }
  process.send?.({ listening: g.url });
  closeOnSignals(g);
}

/** SIGTERM / SIGINT close the gateway cleanly (unspent quota leases go back to the store), then exit. */
export function closeOnSignals(g: RunningGateway): void {
  // One close for both signals (Ctrl-C in a terminal sends SIGINT to a cluster's workers, then the primary sends
  // SIGTERM): a second close would return before the first had handed the leases back, and exit.
  let closing: Promise<void> | null = null;
  const stop = () => void (closing ??= g.close().finally(() => process.exit(0)));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
