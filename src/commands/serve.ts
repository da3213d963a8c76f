import { UsageError } from '../errors.js';
import { checkS3Options, type S3CommandOptions } from './s3-options.js';
import { runCluster, startGateway, type GatewayOptions } from '../gateway/server.js';

export const DEFAULT_STORE = 'sqlite:var/gateway.db';

export interface ServeCommandOptions extends S3CommandOptions {
  dir?: string;
  origin?: string;
  port: number;
  host: string;
  store: string;
  workers?: number;
  quota: number;
  cacheMb: number;
  pollMs: number;
  /** Seconds close() lets requests in progress finish (--shutdown-grace). */
  shutdownGrace: number;
  log: GatewayOptions['logLevel'];
}

export const gatewayOptions = (o: ServeCommandOptions): GatewayOptions => ({
  dir: o.dir,
  origin: o.origin,
  originOptions: { endpoint: o.endpoint, region: o.region, forcePathStyle: o.forcePathStyle },
  port: o.port,
  host: o.host,
  store: o.store,
  quota: o.quota,
  cacheBytes: o.cacheMb * 1024 * 1024,
  pollMs: o.pollMs,
  shutdownGraceMs: o.shutdownGrace * 1000,
  logLevel: o.log,
});

/**
 * Resolves at the first SIGTERM or SIGINT. Both stay handled from then on: Ctrl-C in a terminal sends SIGINT to a
 * cluster's workers and the primary then sends SIGTERM, and a second signal must not end a process that is still
 * handing its leases back.
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.on('SIGTERM', resolve);
    process.on('SIGINT', resolve);
  });
}

/** Serves until a signal, then closes (see RunningGateway.close) and returns; the CLI then ends the process. */
export async function serveCommand(o: ServeCommandOptions): Promise<void> {
  if (o.dir && o.origin) throw new UsageError('give --dir or --origin, not both');
  checkS3Options(o, o.origin ?? o.dir ?? 'dist', '--origin');
  const opts = gatewayOptions(o);
  if (o.workers !== undefined && o.workers > 1) {
    await runCluster(opts, o.workers, {
      announce: (url) => console.log(`listening on ${url} (${o.workers} workers)`),
      report: (line) => console.error(line),
      warn: (line) => console.error(`modelpub: warning: ${line}`),
      untilStopped: untilSignal,
    });
    return;
  }
  const stopped = untilSignal();
  const g = await startGateway(opts);
  for (const line of g.warnings) console.error(`modelpub: warning: ${line}`);
  console.log(`listening on ${g.url}`);
  await stopped;
  await g.close();
}
