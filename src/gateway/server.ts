// Wires a gateway together: source -> live publication (polled, switched without a restart), key cache, quota
// limiter, logger, node:http server; optionally several worker processes on one port (node:cluster).
import cluster from 'node:cluster';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { destination, type Logger, pino } from 'pino';
import { AlreadyReported, UsageError } from '../errors.js';
import { redactUrls } from '../redact.js';
import { outDirState } from '../publication/folder.js';
import { createHandler, type RequestLog } from './app.js';
import { onClientError, onUnmetExpectation } from './client-errors.js';
import { fingerprint, KeyCache } from './keys.js';
import { BodyCache } from './caches.js';
import { Publication } from './publication.js';
import { QuotaLimiter } from './quota.js';
import { openStore } from './stores/index.js';
import type { QuotaStore } from './stores/types.js';
import { openSource } from '../publication/source.js';
import type { RemoteOptions } from '../publication/targets/index.js';
import type { ReadBounds } from '../publication/targets/types.js';

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
  /**
   * How long close() lets requests in progress finish before it closes their connections, in ms. Default 10,000;
   * the CLI allows at most 30 s (--shutdown-grace).
   */
  shutdownGraceMs?: number;
  /** An already open store (tests share one with the code that creates keys); not closed by the gateway. */
  storeInstance?: QuotaStore;
}

export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** The bounds of a gateway's reads from its origin: a request answers 503 within 20 s rather than wait a minute. */
export const ORIGIN_READ_BOUNDS: ReadBounds = { deadlineMs: 20_000 };

export interface RunningGateway {
  url: string;
  server: Server;
  publication(): Publication;
  /** What the operator should hear about how the store is set up (Redis without persistence, CONFIG disabled). */
  warnings: readonly string[];
  /**
   * Stops listening, lets the requests in progress finish for up to the grace period, then closes every connection
   * still open (a half-sent request among them) and hands the unspent quota leases back to the store. Calling it
   * again returns the same promise.
   */
  close(): Promise<void>;
}

/** What a gateway needs besides where it listens. */
export type HandlerOptions = Omit<GatewayOptions, 'port' | 'host' | 'shutdownGraceMs'>;

/**
 * A gateway's request handler over its publication (polled), store, keys and quota, not listening anywhere:
 * startGateway serves it over node:http, and tests call it in-process.
 */
export interface Gateway {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  publication(): Publication;
  /** What the operator should hear about how the store is set up (Redis without persistence, CONFIG disabled). */
  warnings: readonly string[];
  /** The logger (--log), null when silent; flushed by close(). */
  log: Logger | null;
  /** Stops polling, hands the unspent quota leases back, closes the store (unless given) and the origin. */
  close(): Promise<void>;
}

export async function openGateway(o: HandlerOptions): Promise<Gateway> {
  // A reader on the request path tries fewer times and waits less than a publish: a request should fail within the
  // gateway's own 30 s, not wait out six backoffs. Every read ends by its deadline (bounds.ts), retries included.
  const source = o.origin
    ? await openSource(o.origin, {
        retryAttempts: 3,
        timeoutMs: 10_000,
        bounds: ORIGIN_READ_BOUNDS,
        ...o.originOptions,
      })
    : await openSource(o.dir ?? 'dist');
  const cache = new BodyCache(o.cacheBytes);
  const log =
    o.logLevel === 'silent'
      ? null
      : pino({ level: o.logLevel, base: { pid: process.pid } }, destination({ sync: false }));
  const startWarnings: string[] = [];
  let current = await source
    .currentId()
    .then(async (id) => {
      if (id === null) throw Object.assign(new Error(source.nothingPublished), { code: 'ENOENT' });
      try {
        return await Publication.load(source, id, cache);
      } catch (e) {
        // A live publication that cannot be read (its manifest truncated or damaged) leaves the newest kept one that
        // can be: a gateway serves it, says why, and polls on; it refuses to start only when none can be read.
        for (const older of source.kept()) {
          const p = await Publication.load(source, older, cache).catch(() => null);
          if (!p) continue;
          startWarnings.push(
            `the live publication ${id} cannot be read (${redactUrls((e as Error).message)}); serving the newest ` +
              `kept one that can, ${p.id}, until the live one can be read`,
          );
          return p;
        }
        throw e;
      }
    })
    .catch(async (e: Error & { code?: string }) => {
      await source.close();
      const missing = !o.origin && (e.code === 'ENOENT' || e.code === 'ENOTDIR');
      const hint = missing ? await dirHint(o.dir ?? 'dist') : '';
      throw new Error(`no publication to serve at ${source.description}: ${e.message}.${hint}`);
    });
  for (const line of startWarnings) log?.warn(line);
  const store = o.storeInstance ?? (await openStore(o.store, { isolate: true }));
  for (const line of store.warnings ?? []) log?.warn(redactUrls(line));
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
      const id = await source.currentId();
      if (id === null) throw new Error(source.nothingPublished);
      if (id !== current.id) {
        current = await Publication.load(source, id, cache);
        log?.info({ revision: current.revision }, 'switched to a new publication');
      }
    } catch (e) {
      log?.warn({ err: redactUrls(String(e)) }, 'publication poll failed; still serving the current one');
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
    health: {
      revision: () => current?.revision ?? null,
      pingStore: () => store.ping().catch((e: Error) => Promise.reject(new Error(redactUrls(e.message)))),
    },
  });
  let closing: Promise<void> | null = null;
  const close = async () => {
    clearInterval(pollTimer);
    try {
      await quota.close(); // fails if the store does (the leases are then lost, and the error says why)
    } finally {
      if (!o.storeInstance) await store.close();
      await source.close();
      if (log) await new Promise<void>((resolve) => log.flush(() => resolve()));
    }
  };
  return {
    handler,
    publication: () => current,
    warnings: [...(store.warnings ?? []), ...startWarnings],
    log,
    close: () => (closing ??= close()),
  };
}

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const g = await openGateway(o);
  const log = g.log;
  // The handler checks Host itself, to answer a request without one as it answers every other error.
  const server = createServer(
    { maxHeaderSize: 16 * 1024, requestTimeout: 30_000, requireHostHeader: false },
    g.handler,
  );
  server.keepAliveTimeout = 65_000;
  server.on('clientError', onClientError(log));
  server.on('checkExpectation', onUnmetExpectation(log));
  const release = () => g.close();
  try {
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
  } catch (e) {
    await release().catch(() => {});
    throw e;
  }
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const graceMs = o.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${addr.port}`,
    server,
    publication: g.publication,
    warnings: g.warnings,
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // server.close() stops listening and closes idle keep-alive connections, but neither a connection whose
        // answer is still being written nor one holding a half-sent request (its request timeout is no longer
        // checked once the server closes): the first are closed as they go idle, the rest when the grace ends.
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        let graceTimer: NodeJS.Timeout | undefined;
        const graceOver = new Promise<boolean>((resolve) => {
          graceTimer = setTimeout(() => resolve(true), graceMs);
        });
        const cut = await Promise.race([closed.then(() => false), graceOver]);
        clearInterval(sweep);
        clearTimeout(graceTimer);
        if (cut) {
          log?.warn({ graceMs }, 'shutdown grace period over: closing the connections still open');
          server.closeAllConnections();
          await closed;
        }
        await release();
      })()),
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

export interface ClusterEvents {
  /** Once every worker listens: the URL they share. */
  announce(url: string): void;
  /** A line for the operator about a worker (died, replaced, could not start). */
  report(line: string): void;
  /** A warning about how the store is set up (RunningGateway.warnings), told once for all workers. */
  warn(line: string): void;
  /** Resolves when the gateway is asked to stop (a signal): every process of the cluster calls it. */
  untilStopped(): Promise<unknown>;
}

/**
 * Run `workers` processes sharing one port; each holds its own leases against the shared store. In the primary,
 * resolves once a stop was asked for (untilStopped) and every worker has closed as a single process does (its unspent
 * leases go back to the store); in a worker, once it has closed. A worker that cannot start (a port in use, no
 * publication, the store out of reach) stops them all while the cluster is starting: the primary then rejects with
 * that worker's error (a UsageError for a mistake in the command), and the worker with AlreadyReported. Once it
 * serves, a worker that dies is replaced, and a replacement that cannot start is tried again, later and later (up to
 * every 30 s), while the others go on serving.
 */
export async function runCluster(o: GatewayOptions, workers: number, on: ClusterEvents): Promise<void> {
  if (!cluster.isPrimary) return runWorker(o, on);
  if (o.store.startsWith('memory:'))
    throw new UsageError('--workers needs a shared store (sqlite:PATH or redis://HOST:PORT), not memory:');
  const graceMs = o.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  return new Promise<void>((resolve, reject) => {
    let ready = 0;
    let url = '';
    let stopping = false;
    let failure: Error | null = null;
    let retryMs = 0; // the wait before replacing a worker; doubles while replacements fail to start
    let hardStop: NodeJS.Timeout | undefined;
    const live = () => Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
    const finish = () => {
      clearTimeout(hardStop);
      if (failure) reject(failure);
      else resolve();
    };
    // The signal goes to the worker's process itself: Worker.kill() disconnects it first, and a disconnected worker
    // exits at once, without closing.
    const stop = (why: Error | null) => {
      if (stopping) return;
      stopping = true;
      failure = why;
      if (live().length === 0) return finish();
      for (const w of live()) w.process.kill('SIGTERM');
      // A worker still closing well after its own grace period (a store that does not answer) is killed: its
      // unspent leases are lost, as in a crash (docs/quota.md), and the stop says so.
      hardStop = setTimeout(() => {
        const stuck = live();
        failure ??= new Error(
          `${stuck.length} worker(s) had not closed ${(graceMs + CLOSE_MARGIN_MS) / 1000} s after the stop; killed ` +
            '(their unspent quota leases are lost)',
        );
        for (const w of stuck) w.process.kill('SIGKILL');
      }, graceMs + CLOSE_MARGIN_MS);
    };
    for (let i = 0; i < workers; i++) cluster.fork();
    let warned = false;
    cluster.on('message', (w, msg: { listening?: string; warnings?: string[] } & Partial<StartFailure>) => {
      if (msg?.failed !== undefined) {
        if (!url) stop(msg.usage ? new UsageError(msg.failed) : new Error(msg.failed));
        else on.report(`a replacement worker (${w.process.pid}) could not start: ${msg.failed}`);
      } else if (msg?.listening) {
        retryMs = 0;
        if (!warned) for (const line of msg.warnings ?? []) on.warn(line); // every worker opens the same store
        warned = true;
        if (++ready === workers) on.announce((url = msg.listening));
      }
    });
    cluster.on('exit', (w, code, signal) => {
      if (stopping) {
        if (live().length === 0) finish();
        return;
      }
      // Before every worker listens, an exit is a start that failed. The worker said why, unless it crashed: its
      // message, sent just before it exited, is given a moment to arrive first.
      if (!url)
        return void setTimeout(
          () => stop(new Error(`a gateway worker exited before it was listening (${signal ?? `exit code ${code}`})`)),
          200,
        );
      retryMs = Math.min(30_000, retryMs ? 2 * retryMs : 1000);
      on.report(`worker ${w.process.pid} exited (${signal ?? code}); starting another in ${retryMs / 1000} s`);
      setTimeout(() => stopping || cluster.fork(), retryMs);
    });
    void on.untilStopped().then(() => stop(null));
  });
}

/** How long the primary waits past the grace period for its workers to hand their leases back and exit. */
const CLOSE_MARGIN_MS = 10_000;

async function runWorker(o: GatewayOptions, on: ClusterEvents): Promise<void> {
  const stopped = on.untilStopped(); // listened for from the start: a stop during start-up is not missed
  let g: RunningGateway;
  try {
    g = await startGateway(o);
  } catch (e) {
    // The primary prints it, once for all workers, and decides the exit code.
    const failure: StartFailure = {
      failed: (process.env.MODELPUB_DEBUG && (e as Error).stack) || (e as Error).message,
      usage: e instanceof UsageError,
    };
    await new Promise<void>((resolve) => (process.send ? process.send(failure, () => resolve()) : resolve()));
    throw new AlreadyReported((e as Error).message, { cause: e });
  }
  process.send?.({ listening: g.url, warnings: g.warnings });
  await stopped;
  await g.close();
}
