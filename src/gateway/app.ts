// The request handler: method -> route -> key -> parameters -> quota -> publication file (or composed list) ->
// conditional request -> response. Plain node:http: two routes need no framework, and every microsecond here is
// multiplied by the request rate (docs/gateway.md has the figures).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileFor, parseRequest, type ApiRequest } from '../routes.js';
import { composeList } from './compose.js';
import { PROBLEM_TYPE, PROBLEMS, problemBody, type ProblemCode } from './problems.js';
import type { Publication, ServedFile } from './publication.js';

export const MAX_URL_LENGTH = 4096;
export const CACHE_CONTROL = 'private, max-age=300';
const ALLOW = 'GET, HEAD, OPTIONS';
const CORS_BASE = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'ETag, Last-Modified, Retry-After, RateLimit, RateLimit-Policy, X-Publication-Revision, X-Schema-Version' };

export interface KeyLookup { lookup(key: string): Promise<{ id: string } | null> }
export interface Admission { ok: boolean; limit: number; remaining: number; resetSeconds: number }
export interface QuotaCheck { admit(keyId: string): Promise<Admission> }
export interface RequestLog { info(o: object): void; error(o: object, msg?: string): void }

export interface GatewayDeps {
  /** The live publication; read once per request. */
  publication(): Publication;
  keys: KeyLookup;
  quota: QuotaCheck;
  log: RequestLog | null;
  fingerprint(key: string): string;
}

export function createHandler(d: GatewayDeps) {
  return function handle(req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    let route = 'other';
    let keyPrint: string | undefined;
    const done = (status: number) => d.log?.info({ method: req.method, route, status, ms: Math.round((performance.now() - started) * 100) / 100, key: keyPrint });
    serve().then(done, (err: unknown) => {
      // Never a 500: an unexpected failure here is the publication being unreadable.
      d.log?.error({ err: String(err), route }, 'request failed');
      if (!res.headersSent) problem(res, req, 'unavailable');
      else res.destroy();
      done(503);
    });

    async function serve(): Promise<number> {
      const method = req.method ?? '';
      if (method === 'OPTIONS') {
        route = 'preflight';
        res.writeHead(204, {
          ...CORS_BASE, 'access-control-allow-methods': ALLOW, 'access-control-allow-headers': 'x-api-key, if-none-match, if-modified-since',
          'access-control-max-age': '86400', allow: ALLOW,
        });
        res.end();
        return 204;
      }
      if (method !== 'GET' && method !== 'HEAD') return problem(res, req, 'method_not_allowed', { allow: ALLOW });
      const rawUrl = req.url ?? '/';
      if (rawUrl.length > MAX_URL_LENGTH) return problem(res, req, 'uri_too_long');
      let url: URL;
      try {
        url = new URL(rawUrl, 'http://gateway.invalid');
      } catch {
        return problem(res, req, 'bad_request');
      }
      const parsed = parseRequest(url.pathname, url.searchParams);
      if (!parsed.ok && parsed.status === 404) return problem(res, req, 'not_found');
      route = url.pathname === '/api/v1/models' ? 'list' : 'detail';

      const key = req.headers['x-api-key'];
      if (typeof key !== 'string' || key === '') return problem(res, req, 'missing_api_key');
      const owner = key.length <= 256 ? await d.keys.lookup(key) : null;
      // A key's id is `k_` + its fingerprint: no second hash on the hot path.
      keyPrint = owner ? owner.id.slice(2) : d.fingerprint(key);
      if (!owner) return problem(res, req, 'invalid_api_key');
      if (!parsed.ok) return problem(res, req, 'invalid_parameter', {}, parsed.invalid);

      const admission = await d.quota.admit(owner.id);
      const rate = rateHeaders(admission);
      if (!admission.ok) return problem(res, req, 'quota_exceeded', { ...rate, 'retry-after': String(admission.resetSeconds) });

      const pub = d.publication();
      const file = await resolve(pub, parsed.request);
      if (!file) return problem(res, req, 'not_found', rate);
      return send(req, res, pub, file, rate);
    }
  };
}

async function resolve(pub: Publication, r: ApiRequest): Promise<ServedFile | null> {
  const path = fileFor(r, { pageSizes: pub.meta.pageSizes, pages: (l) => Math.max(1, Math.ceil((pub.meta.totals[`${l.lane}.${l.displayOnly ? 'display' : 'public'}`] ?? 0) / l.pageSize)) });
  if (path) return pub.file(path);
  return r.kind === 'list' ? composeList(pub, r) : null;
}

/** IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): one policy, a daily window. */
function rateHeaders(a: Admission): Record<string, string> {
  return {
    'ratelimit-policy': `"daily";q=${a.limit};w=86400`,
    ratelimit: `"daily";r=${a.remaining};t=${a.resetSeconds}`,
  };
}

function send(req: IncomingMessage, res: ServerResponse, pub: Publication, f: ServedFile, extra: Record<string, string>): number {
  const headers: Record<string, string | number> = {
    ...CORS_BASE, ...extra,
    etag: f.etag, 'last-modified': f.lastModified, 'cache-control': CACHE_CONTROL,
    'x-publication-revision': pub.revision, 'x-schema-version': pub.meta.schemaVersion,
  };
  if (notModified(req, f)) {
    res.writeHead(304, headers);
    res.end();
    return 304;
  }
  headers['content-type'] = 'application/json; charset=utf-8';
  headers['content-length'] = f.body.length;
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : f.body);
  return 200;
}

/** RFC 9110 13.1.2 and 13.2.2: If-None-Match (a list, weak comparison) wins over If-Modified-Since. */
export function notModified(req: IncomingMessage, f: ServedFile): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    if (inm.trim() === '*') return true;
    const mine = f.etag;
    for (const raw of inm.split(',')) {
      const tag = raw.trim().replace(/^W\//, '');
      if (tag === mine) return true;
    }
    return false;
  }
  const ims = req.headers['if-modified-since'];
  if (ims !== undefined) {
    const since = Date.parse(ims);
    return !Number.isNaN(since) && Date.parse(f.lastModified) <= since;
  }
  return false;
}

function problem(res: ServerResponse, req: IncomingMessage, code: ProblemCode, headers: Record<string, string> = {}, invalid?: { name: string; reason: string }[]): number {
  const status = PROBLEMS[code].status;
  const body = problemBody(code, invalid ? { invalid } : {});
  res.writeHead(status, { ...CORS_BASE, ...headers, 'content-type': PROBLEM_TYPE, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : body);
  return status;
}
