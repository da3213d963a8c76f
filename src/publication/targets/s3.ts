// An S3 bucket (AWS S3, or an S3-compatible host such as Cloudflare R2 or MinIO through --endpoint) as the remote.
// Only loaded by a dynamic import (targets/index.ts): a build or a gateway on a local folder never loads the SDK.
// Credentials come from the SDK's default chain alone (environment, shared config and credentials files, SSO, ...).
import { createHash } from 'node:crypto';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import pMap from 'p-map';
import { UsageError } from '../../errors.js';
import { IntegrityError, tooLarge } from '../integrity.js';
import { isRetryable, statusOf, withRetry } from '../retry.js';
import { bounded } from './bounds.js';
import { checkedKey } from './keys.js';
import type { PutOptions, ReadBounds, RemoteTarget, TargetEvents } from './types.js';

export interface S3TargetOptions extends TargetEvents {
  /** An S3-compatible host's API URL, e.g. https://<account>.r2.cloudflarestorage.com or http://127.0.0.1:9000. */
  endpoint?: string;
  region?: string;
  /** bucket in the path (https://host/bucket/key), not the host name: what most S3-compatible hosts need. */
  forcePathStyle?: boolean;
  /** Requests under way at once (the HTTP agent keeps this many connections). */
  concurrency?: number;
  /** Above this many keys, sizes() lists the prefix instead of asking for each key. */
  headLimit?: number;
  retryAttempts?: number;
  /** How long a request may wait for the host's next bytes (default 120 s). */
  timeoutMs?: number;
  /** The deadline and minimum rate of every read (bounds.ts), unless a read asks for its own. */
  bounds?: ReadBounds;
}

/** s3://bucket/prefix -> bucket and prefix (without slashes at either end; '' for the bucket's root). */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const u = new URL(url);
  if (u.username || u.password)
    throw new UsageError(
      'an s3:// URL takes no user or password: credentials come from the standard AWS chain (environment, ~/.aws)',
    );
  if (!u.hostname) throw new UsageError(`${url}: no bucket: write s3://BUCKET/PREFIX`);
  const prefix = decodeURIComponent(u.pathname).replace(/^\/+|\/+$/g, '');
  return { bucket: u.hostname, prefix };
}

export function s3Target(url: string, o: S3TargetOptions = {}): RemoteTarget {
  const { bucket, prefix } = parseS3Url(url);
  // The SDK is pinned to a release that supports Node 20 (package.json); its warning that later releases will not
  // is for those who upgrade it, not for every publish.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const full = (key: string) => (prefix ? `${prefix}/${checkedKey(key, url)}` : checkedKey(key, url));
  const description = `s3://${bucket}${prefix ? `/${prefix}` : ''}`;
  const concurrency = o.concurrency ?? 16;
  const client = new S3Client({
    region: o.region,
    endpoint: o.endpoint,
    forcePathStyle: o.forcePathStyle ?? o.endpoint !== undefined,
    // Retries are ours (retry.ts), so each one is counted and shown, and the policy is the same for every host.
    maxAttempts: 1,
    // Content-MD5, which every S3-compatible host checks, rather than the newer x-amz-checksum-* headers that some
    // (older MinIO, s3rver) do not know; the SDK then adds a checksum only where an operation requires one.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      connectionTimeout: 10_000,
      requestTimeout: o.timeoutMs ?? 120_000,
      throwOnRequestTimeout: true,
      httpAgent: { keepAlive: true, maxSockets: concurrency },
      httpsAgent: { keepAlive: true, maxSockets: concurrency },
    },
  });
  const call = async <T>(what: string, key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> => {
    try {
      return await withRetry(fn, { attempts: o.retryAttempts, onRetry: o.onRetry, signal });
    } catch (e) {
      throw explain(e, `${what} s3://${bucket}/${full(key)}`);
    }
  };
  const head = (key: string) =>
    call('HEAD', key, async () => {
      try {
        const r = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: full(key) }));
        return r.ContentLength ?? 0;
      } catch (e) {
        if (statusOf(e) === 404) return null;
        throw e;
      }
    });
  const putObject = async (key: string, body: Buffer, p: PutOptions, condition = {}) => {
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: full(key),
        Body: body,
        ContentType: p.contentType,
        CacheControl: p.cacheControl,
        ContentMD5: createHash('md5').update(body).digest('base64'),
        ...condition,
      }),
    );
  };
  const list = async (p: string) => {
    const out: Array<{ key: string; bytes: number }> = [];
    let token: string | undefined;
    do {
      const r = await call('LIST', p, () =>
        client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: full(p), ContinuationToken: token, MaxKeys: 1000 }),
        ),
      );
      for (const c of r.Contents ?? [])
        if (c.Key) out.push({ key: prefix ? c.Key.slice(prefix.length + 1) : c.Key, bytes: c.Size ?? 0 });
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return out;
  };
  return {
    description,
    get: (key, g = {}) =>
      bounded(`GET s3://${bucket}/${full(key)}`, g, o.bounds, (t) =>
        call(
          'GET',
          key,
          async () => {
            try {
              const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: full(key) }), {
                abortSignal: t.signal,
              });
              const max = g.maxBytes ?? Infinity;
              const body = r.Body as AsyncIterable<Uint8Array> & { destroy?: () => void };
              if ((r.ContentLength ?? 0) > max) {
                body.destroy?.();
                throw tooLarge(`s3://${bucket}/${full(key)}`, max);
              }
              // Counted as it comes, and cut at max + 1 bytes: a host whose Content-Length lies cannot fill memory.
              const chunks: Uint8Array[] = [];
              let received = 0;
              for await (const c of body) {
                received += c.length;
                t.received(c.length);
                if (received > max) {
                  body.destroy?.();
                  throw tooLarge(`s3://${bucket}/${full(key)}`, max);
                }
                chunks.push(c);
              }
              return Buffer.concat(chunks);
            } catch (e) {
              if (statusOf(e) === 404) return null;
              throw e;
            }
          },
          t.signal,
        ),
      ),
    getTagged: (key) =>
      call('GET', key, async () => {
        try {
          const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: full(key) }));
          return { body: Buffer.from(await r.Body!.transformToByteArray()), tag: r.ETag ?? '' };
        } catch (e) {
          if (statusOf(e) === 404) return null;
          throw e;
        }
      }),
    put: (key, body, p) => call('PUT', key, () => putObject(key, body, p)),
    putIf: (key, body, p, tag) =>
      call('PUT', key, async () => {
        try {
          await putObject(key, body, p, tag === null ? { IfNoneMatch: '*' } : { IfMatch: tag });
          return true;
        } catch (e) {
          // 412: the condition does not hold; 409 ConditionalRequestConflict: another conditional write to the key
          // won; 404: an If-Match on a key that is gone. Each means another process got there first.
          const status = statusOf(e);
          if (status === 412 || status === 409 || status === 404) return false;
          throw e;
        }
      }),
    async sizes(keys) {
      const out = new Map<string, number | null>();
      if (keys.length <= (o.headLimit ?? 500)) {
        const found = await pMap(keys, head, { concurrency });
        for (const [i, k] of keys.entries()) out.set(k, found[i]!);
        return out;
      }
      // One LIST answers up to 1,000 keys: for the thousands of objects of a first publish, listing the folder
      // they share is far fewer requests than a HEAD for each.
      const listed = new Map((await list(commonFolder(keys))).map((e) => [e.key, e.bytes]));
      for (const k of keys) out.set(k, listed.get(k) ?? null);
      return out;
    },
    list,
    async delete(keys) {
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000);
        const r = await call('DELETE', batch[0]!, () =>
          client.send(
            new DeleteObjectsCommand({
              Bucket: bucket,
              Delete: { Objects: batch.map((k) => ({ Key: full(k) })), Quiet: true },
            }),
          ),
        );
        const failed = r.Errors?.[0];
        if (failed)
          throw new Error(`DELETE s3://${bucket}/${failed.Key}: ${failed.Code ?? 'error'}: ${failed.Message ?? ''}`);
      }
    },
    async close() {
      client.destroy();
    },
  };
}

/** The longest folder ('a/b/') every key is in. */
function commonFolder(keys: string[]): string {
  let p = keys[0] ?? '';
  for (const k of keys) while (!k.startsWith(p)) p = p.slice(0, -1);
  return p.slice(0, p.lastIndexOf('/') + 1);
}

/** An SDK error as one line naming the request, with what to do where the SDK's own message does not say it. */
function explain(e: unknown, what: string): Error {
  if (e instanceof IntegrityError) return e;
  const x = e as Error & { name?: string; Code?: string };
  if (x?.name === 'CredentialsProviderError')
    return new Error(
      `${what}: no AWS credentials found. They come from the standard AWS chain only: AWS_ACCESS_KEY_ID and ` +
        'AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with ~/.aws/credentials or ~/.aws/config',
      { cause: e },
    );
  if (/region is missing/i.test(x?.message ?? ''))
    return new UsageError(`${what}: no AWS region: give --region, or set AWS_REGION`);
  const status = statusOf(e);
  const name = x?.name && x.name !== 'Error' ? x.name : x?.Code;
  const reason = [name, status ? `(HTTP ${status})` : '', x?.message && x.message !== name ? x.message : '']
    .filter(Boolean)
    .join(' ');
  return new Error(`${what}: ${reason || String(e)}${isRetryable(e) ? ' (gave up after retries)' : ''}`, {
    cause: e,
  });
}
