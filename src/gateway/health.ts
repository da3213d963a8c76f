// GET /healthz: whether this gateway can answer, for a load balancer or a supervisor. No key, no quota, and never a
// line in the request log (a probe every few seconds would drown it). 200 when a publication is loaded and the key
// and quota store answers within HEALTH_DEADLINE_MS; 503 with the reason otherwise.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JSON_CONTENT_TYPE } from '../schema/primitives.js';
import { ALLOW, sendProblem } from './http.js';

export const HEALTH_PATH = '/healthz';
/** A store slower than this is unhealthy: requests that need it would soon wait as long, or fail. */
export const HEALTH_DEADLINE_MS = 1000;

export interface Health {
  /** The revision being served, or null when none is loaded. */
  revision(): string | null;
  /** Resolves when the store answers and holds what this process saw in it; rejects with why not. */
  pingStore(): Promise<void>;
}

export const isHealthPath = (rawUrl: string) => rawUrl === HEALTH_PATH || rawUrl.startsWith(`${HEALTH_PATH}?`);

/** Answers the probe; resolves with the status sent. */
export function serveHealth(req: IncomingMessage, res: ServerResponse, h: Health): number | Promise<number> {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return sendProblem(res, req, 'method_not_allowed', ['allow', ALLOW]);
  const revision = h.revision();
  if (revision === null) return send(req, res, 503, { status: 'unavailable', reason: 'no publication is loaded' });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the key and quota store did not answer within ${HEALTH_DEADLINE_MS} ms`)),
      HEALTH_DEADLINE_MS,
    );
  });
  return Promise.race([h.pingStore(), deadline])
    .then(
      () => send(req, res, 200, { status: 'ok', revision }),
      (e: Error) => send(req, res, 503, { status: 'unavailable', revision, reason: `store: ${e.message}` }),
    )
    .finally(() => clearTimeout(timer));
}

function send(req: IncomingMessage, res: ServerResponse, status: number, body: object): number {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': JSON_CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : text);
  return status;
}
