import { UsageError } from '../errors.js';
import { checkS3Options, type S3CommandOptions } from './s3-options.js';
import { closeOnSignals, startCluster, startGateway, type GatewayOptions } from '../gateway/server.js';

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
  logLevel: o.log,
});

export async function serveCommand(o: ServeCommandOptions): Promise<void> {
  if (o.dir && o.origin) throw new UsageError('give --dir or --origin, not both');
  checkS3Options(o, o.origin ?? o.dir ?? 'dist', '--origin');
  const opts = gatewayOptions(o);
  if (o.workers !== undefined && o.workers > 1) {
    await startCluster(opts, o.workers, (url) => console.log(`listening on ${url} (${o.workers} workers)`));
    return;
  }
  const g = await startGateway(opts);
  console.log(`listening on ${g.url}`);
  closeOnSignals(g);
}
