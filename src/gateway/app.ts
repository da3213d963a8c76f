// The request handler: method -> route -> key -> parameters -> quota -> publication file (or composed list) ->
// conditional request -> response. Plain node:http: two routes need no framework, and every microsecond here is
// multiplied by the request rate (docs/benchmarks/README.md has the figures).
//
// The common request (a key seen in the last seconds, units left in this process's lease, a body in memory) runs
// synchronously from the first byte to res.end(): each step returns its answer, or a promise only when it must wait
// (a store lookup, a lease refill, a disk or origin read), and the next step runs when it is known.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileFor, parseRequest, type ApiRequest, type ParseResult } from '../routes.js';
import { composeList, composedCached } from './compose.js';
import { PROBLEM_TYPE, PROBLEMS, problemBody, type ProblemCode } from './problems.js';
import { CORS_HEADERS, type FileInfo, type Publication } from './publication.js';
import type { Admission } from './quota.js';

export const MAX_URL_LENGTH = 4096;
const ALLOW = 'GET, HEAD, OPTIONS';
const PREFLIGHT_HEADERS = [
  ...CORS_HEADERS, 'access-control-allow-methods', ALLOW, 'access-control-allow-headers', 'x-api-key, if-none-match, if-modified-since',
  'access-control-max-age', '86400', 'allow', ALLOW,
];
const JSON_TYPE = 'application/json; charset=utf-8';

export interface KeyRecordLike { id: string }
export interface KeyLookup {
  /** The answer if known without the store (undefined otherwise). */
  peek(key: string): KeyRecordLike | null | undefined;
  lookup(key: string): Promise<KeyRecordLike | null>;
}
export interface QuotaCheck {
  /** The answer if known without the store (undefined otherwise). */
  tryAdmit(keyId: string): Admission | undefined;
  admit(keyId: string): Promise<Admission>;
}
export interface RequestLog { info(o: object): void; error(o: object, msg?: string): void }

export interface GatewayDeps {
  /** The live publication; read once per request. */
  publication(): Publication;
  keys: KeyLookup;
  quota: QuotaCheck;
  log: RequestLog | null;
  fingerprint(key: string): string;
}

type Route = 'preflight' | 'list' | 'detail' | 'other';
interface ParsedUrl {
  route: Route;
  result: ParseResult | 'bad_request';
  /** The prebuilt file that answers it in `pub` (null: composed or not found), remembered for the live publication. */
  pub: Publication | null;
  info: FileInfo | null;
}

/** Raw request target -> its parse: the same URLs come back all day. Bounded (20,000 targets of at most 512 bytes);
 * the oldest entry goes first. */
class UrlCache {
  private map = new Map<string, ParsedUrl>();
  constructor(private readonly max: number) {}
  clear(): void {
    this.map.clear();
  }
  get(rawUrl: string): ParsedUrl {
    if (rawUrl.length > 512) return parseUrl(rawUrl); // rare, and would let a client fill the cache with little
    let p = this.map.get(rawUrl);
    if (p === undefined) {
      p = parseUrl(rawUrl);
      if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value!);
      this.map.set(rawUrl, p);
    }
    return p;
  }
}

function parseUrl(rawUrl: string): ParsedUrl {
  let url: URL;
  try {
    url = new URL(rawUrl, 'http://gateway.invalid');
  } catch {
    return { route: 'other', result: 'bad_request', pub: null, info: null };
  }
  const result = parseRequest(url.pathname, url.searchParams);
  const route: Route = result.ok ? result.request.kind : url.pathname === '/api/v1/models' ? 'list' : url.pathname.startsWith('/api/v1/models/') ? 'detail' : 'other';
  return { route, result, pub: null, info: null };
}

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => v instanceof Promise;

export function createHandler(d: GatewayDeps) {
  const urls = new UrlCache(20_000);
  let lastPub: Publication | null = null;
  const policies = new Map<number, string>();
  /** IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): one policy, a daily window. */
  const rateHeaders = (a: Admission): string[] => {
    let policy = policies.get(a.limit);
    if (policy === undefined) policies.set(a.limit, (policy = `"daily";q=${a.limit};w=86400`));
    return ['ratelimit-policy', policy, 'ratelimit', `"daily";r=${a.remaining};t=${a.resetSeconds}`];
  };

  return function handle(req: IncomingMessage, res: ServerResponse): void {
    const started = d.log ? performance.now() : 0;
    let route: Route = 'other';
    let keyPrint: string | undefined;
    const done = (status: number) => d.log?.info({ method: req.method, route, status, ms: Math.round((performance.now() - started) * 100) / 100, key: keyPrint });
    // The answer is sent by then; a failing log call must not touch the response (nor become an unhandled rejection).
    const logged = (s: number) => {
      try {
        done(s);
      } catch { /* the logger's own problem */ }
    };
    const fail = (err: unknown) => {
      // Never a 500: an unexpected failure here is the publication or the store being unreadable.
      try {
        d.log?.error({ err: String(err), route }, 'request failed');
      } catch { /* as above */ }
      if (!res.headersSent) problem(res, req, 'unavailable');
      else res.destroy();
      logged(503);
    };
    let status: number | Promise<number>;
    try {
      status = start();
    } catch (err) {
      return fail(err);
    }
    if (isPromise(status)) status.then(logged, fail);
    else logged(status);

    function start(): number | Promise<number> {
      const method = req.method ?? '';
      if (method === 'OPTIONS') {
        route = 'preflight';
        res.writeHead(204, PREFLIGHT_HEADERS);
        res.end();
        return 204;
      }
      if (method !== 'GET' && method !== 'HEAD') return problem(res, req, 'method_not_allowed', ['allow', ALLOW]);
      const rawUrl = req.url ?? '/';
      if (rawUrl.length > MAX_URL_LENGTH) return problem(res, req, 'uri_too_long');
      const parsed = urls.get(rawUrl);
      route = parsed.route;
      if (parsed.result === 'bad_request') return problem(res, req, 'bad_request');
      if (!parsed.result.ok && parsed.result.status === 404) return problem(res, req, 'not_found');

      const key = req.headers['x-api-key'];
      if (typeof key !== 'string' || key === '') return problem(res, req, 'missing_api_key');
      const known = key.length <= 256 ? d.keys.peek(key) : null;
      if (known === undefined) return d.keys.lookup(key).then((owner) => withKey(key, owner, parsed));
      return withKey(key, known, parsed);
    }

    function withKey(key: string, owner: KeyRecordLike | null, parsed: ParsedUrl): number | Promise<number> {
      // A key's id is `k_` + its fingerprint: no second hash on the common path.
      keyPrint = owner ? owner.id.slice(2) : d.fingerprint(key);
      if (!owner) return problem(res, req, 'invalid_api_key');
      const result = parsed.result as ParseResult;
      if (!result.ok) return problem(res, req, 'invalid_parameter', [], result.status === 400 ? result.invalid : undefined);
      const admission = d.quota.tryAdmit(owner.id);
      if (admission === undefined) return d.quota.admit(owner.id).then((a) => admitted(a, parsed, result.request));
      return admitted(admission, parsed, result.request);
    }

    function admitted(a: Admission, parsed: ParsedUrl, request: ApiRequest): number | Promise<number> {
      const rate = rateHeaders(a);
      if (!a.ok) return problem(res, req, 'quota_exceeded', [...rate, 'retry-after', String(a.resetSeconds)]);
      const pub = d.publication();
      if (pub !== lastPub) {
        // A new publication: forget the old one's files (and let it be collected once its requests are done).
        urls.clear();
        lastPub = pub;
      }
      if (parsed.pub !== pub) {
        parsed.info = prebuilt(pub, request);
        parsed.pub = pub;
      }
      const info = parsed.info;
      if (info === null) {
        if (request.kind === 'detail') return problem(res, req, 'not_found', rate);
        const made = composedCached(pub, request);
        if (made) return send(req, res, made, made.body, rate);
        return composeList(pub, request).then((f) => send(req, res, f, f.body, rate));
      }
      const body = pub.cachedBody(info);
      if (body === undefined) return pub.body(info).then((b) => send(req, res, info, b, rate));
      return send(req, res, info, body, rate);
    }
  };
}

/** The prebuilt file that answers a request in a publication; null when it is composed (lists) or unknown (details). */
function prebuilt(pub: Publication, r: ApiRequest): FileInfo | null {
  const path = fileFor(r, { pageSizes: pub.meta.pageSizes, pages: (l) => Math.max(1, Math.ceil((pub.meta.totals[`${l.lane}.${l.displayOnly ? 'display' : 'public'}`] ?? 0) / l.pageSize)) });
  return path === null ? null : pub.info(path);
}

function send(req: IncomingMessage, res: ServerResponse, f: FileInfo, body: Buffer, rate: string[]): number {
  // A flat [name, value, ...] list: node:http takes it without building a header object per request.
  const headers = f.headers.concat(rate);
  if (notModified(req, f)) {
    res.writeHead(304, headers);
    res.end();
    return 304;
  }
  headers.push('content-type', JSON_TYPE, 'content-length', String(body.length));
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
  return 200;
}

/** RFC 9110 13.1.2 and 13.2.2: If-None-Match (a list, weak comparison) wins over If-Modified-Since. */
export function notModified(req: IncomingMessage, f: FileInfo): boolean {
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

function problem(res: ServerResponse, req: IncomingMessage, code: ProblemCode, headers: string[] = [], invalid?: { name: string; reason: string }[]): number {
  const status = PROBLEMS[code].status;
  const body = problemBody(code, invalid ? { invalid } : {});
  res.writeHead(status, [...CORS_HEADERS, ...headers, 'content-type', PROBLEM_TYPE, 'content-length', String(Buffer.byteLength(body)), 'cache-control', 'no-store']);
  res.end(req.method === 'HEAD' ? undefined : body);
  return status;
}
