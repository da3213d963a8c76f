// A static host or public bucket (or a CDN in front of one) read over http(s). node:http, never fetch: fetch decodes
// a body stored with Content-Encoding and the sha256 check then fails on bytes that were fine. Asking for identity
// also keeps a CDN that compresses on the fly from sending anything but the bytes as stored. A host behind basic auth
// is given as https://user:token@host/: the request carries the credentials, every message the masked URL.
import http from 'node:http';
import https from 'node:https';
import { redactUrl, redactUrls } from '../../redact.js';
import { tooLarge } from '../integrity.js';
import { withRetry } from '../retry.js';
import { bounded, type Transfer } from './bounds.js';
import { checkedKey } from './keys.js';
import type { ReadBounds, RemoteReader, TargetEvents } from './types.js';

export interface HttpReaderOptions extends TargetEvents {
  /** How long a request may wait for the host's next bytes, in ms (default 30 s); `bounds` limits the whole read. */
  timeoutMs?: number;
  retryAttempts?: number;
  /** The deadline and minimum rate of every read (bounds.ts), unless a read asks for its own. */
  bounds?: ReadBounds;
}

/** A failed request, with its status for the retry policy (5xx and 429 are retried). `url` is masked. */
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
  const getOnce = (url: string, shown: string, maxBytes: number, t: Transfer) =>
    new Promise<Buffer | null>((resolve, reject) => {
      const req = (secure ? https : http).get(
        url,
        { agent, headers: { 'accept-encoding': 'identity' }, timeout: timeoutMs, signal: t.signal },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status === 404) {
            res.resume();
            return resolve(null);
          }
          if (status !== 200) {
            res.resume();
            return reject(new HttpStatusError(shown, status));
          }
          const encoding = res.headers['content-encoding'];
          if (encoding && encoding !== 'identity') {
            res.resume();
            return reject(
              new Error(`GET ${shown}: answered with Content-Encoding ${encoding} though asked for identity`),
            );
          }
          if (Number(res.headers['content-length'] ?? 0) > maxBytes) {
            res.destroy();
            return reject(tooLarge(shown, maxBytes));
          }
          const chunks: Buffer[] = [];
          let received = 0;
          res.on('data', (c: Buffer) => {
            received += c.length;
            t.received(c.length);
            if (received <= maxBytes) return void chunks.push(c);
            res.destroy();
            reject(tooLarge(shown, maxBytes));
          });
          res.on('end', () => (res.complete ? resolve(Buffer.concat(chunks)) : reject(cut(shown))));
          res.on('error', (e) => reject(Object.assign(cut(shown), { cause: e })));
        },
      );
      req.on('timeout', () =>
        req.destroy(Object.assign(new Error(`GET ${shown}: no answer in ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
      );
      // Node's own messages name no URL; one that did would have it masked.
      req.on('error', (e) =>
        reject(e.message.includes(shown) ? e : new Error(`GET ${shown}: ${redactUrls(e.message)}`, { cause: e })),
      );
    });
  return {
    description: redactUrl(root),
    get(key, g = {}) {
      const url = new URL(checkedKey(key, redactUrl(root)), root).href;
      const shown = redactUrl(url);
      return bounded(`GET ${shown}`, g, o.bounds, (t) =>
        withRetry(() => getOnce(url, shown, g.maxBytes ?? Infinity, t), {
          attempts: o.retryAttempts,
          onRetry: o.onRetry,
          signal: t.signal,
        }),
      );
    },
    async close() {
      agent.destroy();
    },
  };
}

const cut = (shown: string) =>
  Object.assign(new Error(`GET ${shown}: the body was cut short`), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
