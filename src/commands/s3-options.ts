// The options of a command that reads or writes an s3:// remote (publish, serve --origin, build --previous).
import { UsageError } from '../errors.js';

export interface S3CommandOptions {
  endpoint?: string;
  region?: string;
  forcePathStyle?: boolean;
}

/** --endpoint, --region and path style are for an s3:// URL (`flag` names the option that gives it). */
export function checkS3Options(o: S3CommandOptions, url: string, flag: string): void {
  const s3 = url.startsWith('s3://');
  for (const [given, name] of [
    [o.endpoint, '--endpoint'],
    [o.region, '--region'],
    [o.forcePathStyle, o.forcePathStyle ? '--force-path-style' : '--no-force-path-style'],
  ] as const)
    if (given !== undefined && !s3) throw new UsageError(`${name} is for an s3:// ${flag}, not ${url}`);
  if (o.endpoint !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(o.endpoint))
    throw new UsageError(
      `--endpoint ${o.endpoint}: give the API's root URL, e.g. https://ACCOUNT.r2.cloudflarestorage.com`,
    );
}
