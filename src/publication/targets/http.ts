// A static host or public bucket (or a CDN in front of one) read over http(s). node:http, never fetch: fetch decodes
// a body stored with Content-Encoding and the sha256 check then fails on bytes that were fine. Asking for identity
// also keeps a CDN that compresses on the fly from sending anything but the bytes as stored.
import http from 'node:http';
import https from 'node:https';
import { tooLarge } from '../integrity.js';
import { withRetry } from '../retry.js';
import type { RemoteReader, TargetEvents } from './types.js';

export interface HttpReaderOptions extends TargetEvents {
  timeoutMs?: number;
  retryAttempts?: number;
}

/** A failed request, with its status for the retry policy (5xx and 429 are retried). */
export class HttpStatusError extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
  ) {
    super(`GET ${url} answered ${status}`);
    this.name = 'HttpStatusError';
  }
}

export function httpReader(base: string, o: HttpReaderOptions = {}): RemoteReader {
  const root = base.endsWith('/') ? base : `${base}/`;
  const secure = new URL(root).protocol === 'https:';
  const agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  const timeoutMs = o.timeoutMs ?? 30_000;
  const getOnce = (url: string, maxBytes = Infinity) =>
    new Promise<Buffer | null>((resolve, reject) => {
      const req = (secure ? https : http).get(
        url,
        { agent, headers: { 'accept-encoding': 'identity' }, timeout: timeoutMs },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status === 404) {
            res.resume();
            return resolve(null);
          }
          if (status !== 200) {
            res.resume();
            return reject(new HttpStatusError(url, status));
          }
          const encoding = res.headers['content-encoding'];
          if (encoding && encoding !== 'identity') {
            res.resume();
            return reject(
              new Error(`GET ${url}: answered with Content-Encoding ${encoding} though asked for identity`),
            );
          }
          if (Number(res.headers['content-length'] ?? 0) > maxBytes) {
            res.destroy();
            return reject(tooLarge(url, maxBytes));
          }
          const chunks: Buffer[] = [];
          let received = 0;
          res.on('data', (c: Buffer) => {
            received += c.length;
            if (received <= maxBytes) return void chunks.push(c);
            res.destroy();
            reject(tooLarge(url, maxBytes));
          });
          res.on('end', () => (res.complete ? resolve(Buffer.concat(chunks)) : reject(cut(url))));
          res.on('error', (e) => reject(Object.assign(cut(url), { cause: e })));
        },
      );
      req.on('timeout', () =>
        req.destroy(Object.assign(new Error(`GET ${url}: no answer in ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
      );
      req.on('error', (e) => reject(e.message.includes(url) ? e : new Error(`GET ${url}: ${e.message}`, { cause: e })));
    });
  return {
    description: root,
    get: (key, g = {}) =>
      withRetry(() => getOnce(new URL(key, root).href, g.maxBytes), { attempts: o.retryAttempts, onRetry: o.onRetry }),
    async close() {
      agent.destroy();
    },
  };
}

const cut = (url: string) =>
  Object.assign(new Error(`GET ${url}: the body was cut short`), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
