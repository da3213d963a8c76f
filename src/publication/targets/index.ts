// A remote by URL: file:///PATH, s3://BUCKET/PREFIX, or (read only) http(s)://HOST/PREFIX/.
import { UsageError } from '../../errors.js';
import { type FileTargetOptions, fileTarget } from './file.js';
import { type HttpReaderOptions, httpReader } from './http.js';
import type { S3TargetOptions } from './s3.js';
import type { RemoteReader, RemoteTarget } from './types.js';

export type RemoteOptions = S3TargetOptions &
  HttpReaderOptions &
  FileTargetOptions & {
    /** The pointer's own deadline (remote-source.ts, DEFAULT_POINTER_DEADLINE_MS); never longer than bounds'. */
    pointerDeadlineMs?: number;
  };

function scheme(url: string, where: string, allowed: string[]): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`${where} ${url} is not a URL: write ${allowed.join(', ')}`);
  }
  if (!allowed.some((a) => a.startsWith(u.protocol)))
    throw new UsageError(`${where} ${url}: write ${allowed.join(', ')}`);
  if (u.search || u.hash) throw new UsageError(`${where} ${url}: a ?query or #fragment cannot be part of the root`);
  return u.protocol;
}

/** Where `modelpub publish --to` writes. The S3 SDK is loaded here, and only for s3:// URLs. */
export async function openTarget(url: string, o: RemoteOptions = {}, where = '--to'): Promise<RemoteTarget> {
  const p = scheme(url, where, ['s3://BUCKET/PREFIX', 'file:///PATH']);
  if (p === 'file:') {
    if (new URL(url).host && new URL(url).hostname !== 'localhost')
      throw new UsageError(
        `${where} ${url}: a file:// URL names an absolute path, with three slashes: file:///srv/modelpub`,
      );
    return fileTarget(url, o);
  }
  const { s3Target } = await import('./s3.js');
  return s3Target(url, o);
}

/** Where a publication is read from: any target, or a static host over http(s). */
export async function openReader(url: string, o: RemoteOptions = {}, where = 'remote'): Promise<RemoteReader> {
  const p = scheme(url, where, ['https://HOST/PREFIX/', 'http://HOST/PREFIX/', 's3://BUCKET/PREFIX', 'file:///PATH']);
  if (p === 'http:' || p === 'https:') return httpReader(url, o);
  return openTarget(url, o, where);
}
