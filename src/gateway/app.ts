// The request handler: method -> route -> key -> parameters -> quota -> publication file (or composed list) ->
// conditional request -> response. Plain node:http: two routes need no framework, and every microsecond here is
// multiplied by the request rate (docs/benchmarks/README.md has the figures).
//
// The common request (a key seen in the last seconds, units left in this process's lease, a body in memory) runs
// synchronously from the first byte to res.end(): each step returns its answer, or a promise only when it must wait
// (a store lookup, a lease refill, a disk or origin read), and the next step runs when it is known.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  API_PREFIX,
  fileFor,
  MAX_SLUG_LENGTH,
  parseRequest,
  type ApiRequest,
  type InvalidParam,
  type ParseResult,
} from '../routes.js';
import type { QueryLane } from '../schema/api.js';
import { composeList, composedCached } from './compose.js';
import { PROBLEMS, problemBody, problemHeaders, type ProblemCode } from './problems.js';
import {
  CACHE_CONTROL,
  CORS_HEADERS,
  useSlot,
  type CacheSlot,
  type FileInfo,
  type Publication,
} from './publication.js';
import type { Admission } from './quota.js';
import { SendBuffers } from './send-buffers.js';
import { parseHttpDate } from './validators.js';

export const MAX_URL_LENGTH = 4096;
/**
 * Requests answered in order behind the one being sent on a connection (HTTP/1.1 pipelining). Each holds its body
 * until its turn, a composed page a copy of its own: a client that pipelines thousands and reads nothing would hold
 * gigabytes. Past this depth, the answer is 503 `too_many_pipelined` and the connection closes once the queue is
 * sent (the client retries the rest on a new one, as RFC 9112 9.3.2 has pipelining clients do).
 */
export const MAX_QUEUED_PER_CONNECTION = 16;
const QUEUED = Symbol('answers queued on this connection');
const ALLOW = 'GET, HEAD, OPTIONS';
const PREFLIGHT_HEADERS = [
  // `*`: any header a page's fetch wrapper adds (Content-Type, X-Client-Version) passes, as answers carry no
  // credentials; the names before it are for browsers older than the wildcard.
  ...CORS_HEADERS,
  'access-control-allow-methods',
  ALLOW,
  'access-control-allow-headers',
  'x-api-key, if-none-match, if-modified-since, *',
  'access-control-max-age',
  '86400',
  'allow',
  ALLOW,
];
const JSON_TYPE = 'application/json; charset=utf-8';
/** What a 404 tells the developer: which of path, slug form or lane was wrong (one `not_found` code for all). */
const NO_PATH = 'No such path: this API answers /api/v1/models and /api/v1/models/{slug}.';
const NOT_A_SLUG = `No model has this slug: slugs are lower-case letters, digits and single hyphens, at most ${MAX_SLUG_LENGTH} characters, as in the slug field of a list item (gpt-4o).`;
const notInLane = (lane: QueryLane): string =>
  lane === 'all'
    ? 'No published model has this slug.'
    : `No published model has this slug in lane ${lane}${lane === 'verified' ? ' (the default)' : ''}; lane=all covers every model.`;

const NO_HOST = 'An HTTP/1.1 request must carry a Host header (RFC 9112, section 3.2).';

export interface KeyRecordLike {
  id: string;
}
export interface KeyLookup {
  /** The answer if known without the store (undefined otherwise). */
  peek(key: string): KeyRecordLike | null | undefined;
  lookup(key: string): Promise<KeyRecordLike | null>;
}
export interface QuotaCheck {
  /** The answer if known without the store (undefined otherwise). */
  tryAdmit(keyId: string): Admission | undefined;
  admit(keyId: string): Promise<Admission>;
  /** Gives back the unit of an admitted request that could not be answered. */
  refund(keyId: string, a: Admission): void;
}
export interface RequestLog {
  info(o: object): void;
  error(o: object, msg?: string): void;
}

export interface GatewayDeps {
  /** The live publication; read once per request. */
  publication(): Publication;
  keys: KeyLookup;
  quota: QuotaCheck;
  log: RequestLog | null;
  fingerprint(key: string): string;
  /** Called when a request failed to read the publication or the store: e.g. look for a new publication now. */
  onUnavailable?(): void;
}

type Route = 'preflight' | 'list' | 'detail' | 'other';
interface ParsedUrl {
  route: Route;
  result: ParseResult | 'bad_request';
  /** Whether a CORS preflight for this target passes: the path has the shape of one of the two operations. */
  preflight: boolean;
  /** The prebuilt file that answers it in `pub` (null: composed or not found), remembered for the live publication. */
  pub: Publication | null;
  info: FileInfo | null;
  /** The body cache's slot for that file's bytes, once found: a hit reads it without a lookup by hash. */
  body: CacheSlot<Buffer> | undefined;
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
    // Origin-form targets are paths: '//x/api/...' is the path '//x/api/...', not a URL of host x.
    url = rawUrl.startsWith('/')
      ? new URL(`http://gateway.invalid${rawUrl}`)
      : new URL(rawUrl, 'http://gateway.invalid');
  } catch {
    return { route: 'other', result: 'bad_request', preflight: false, pub: null, info: null, body: undefined };
  }
  const result = parseRequest(url.pathname, url.searchParams);
  const route: Route = result.ok
    ? result.request.kind
    : url.pathname === API_PREFIX
      ? 'list'
      : url.pathname.startsWith(`${API_PREFIX}/`)
        ? 'detail'
        : 'other';
  // A slug that is not canonical (/api/v1/models/GPT-4o) still passes the preflight: a page then reads the GET's 404
  // problem body, not a CORS network error.
  const preflight =
    route === 'list' || (route === 'detail' && /^[^/]+$/.test(url.pathname.slice(API_PREFIX.length + 1)));
  return { route, result, preflight, pub: null, info: null, body: undefined };
}

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => v instanceof Promise;

/** One request in flight: what its log line needs besides the request itself. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  route: Route;
  keyPrint: string | undefined;
  started: number;
  /** Once admitted: whose unit it spent, and the admission (a request that then fails gets its unit back). */
  keyId: string | undefined;
  admission: Admission | undefined;
}

export function createHandler(d: GatewayDeps) {
  const urls = new UrlCache(20_000);
  const heads = new ResponseHeads();
  let lastPub: Publication | null = null;
  // The steps are created once, here, not per request: a request carries its state in one small Exchange object.

  function logged(x: Exchange, status: number): void {
    if (!d.log) return;
    // The answer is sent by then; a failing log call must not touch the response (nor become an unhandled rejection).
    try {
      d.log.info({
        method: x.req.method,
        route: x.route,
        status,
        ms: Math.round((performance.now() - x.started) * 100) / 100,
        key: x.keyPrint,
      });
    } catch {
      /* the logger's own problem */
    }
  }

  function fail(x: Exchange, err: unknown): void {
    // Never a 500: an unexpected failure here is the publication or the store being unreadable.
    try {
      d.log?.error({ err: String(err), route: x.route }, 'request failed');
    } catch {
      /* as above */
    }
    if (x.admission !== undefined) d.quota.refund(x.keyId!, x.admission); // not answered: not counted
    // A problem answer only on an untouched response: a writeHead() that threw half-way has already set the status
    // line (and for a 304, no body), so the connection is closed instead.
    if (!x.res.headersSent && x.res.statusMessage === undefined) problem(x.res, x.req, 'unavailable');
    else x.res.destroy();
    logged(x, 503);
    d.onUnavailable?.();
  }

  function start(x: Exchange): number | Promise<number> {
    const { req, res } = x;
    // node:http's own check (requireHostHeader) answers a bare 400 without CORS headers or a problem body.
    if (req.headers.host === undefined && req.httpVersionMinor === 1 && req.httpVersionMajor === 1)
      return problem(res, req, 'bad_request', ['connection', 'close'], { detail: NO_HOST });
    const method = req.method ?? '';
    const preflight = method === 'OPTIONS';
    if (!preflight && method !== 'GET' && method !== 'HEAD')
      return problem(res, req, 'method_not_allowed', ['allow', ALLOW]);
    const rawUrl = req.url ?? '/';
    if (rawUrl.length > MAX_URL_LENGTH) return problem(res, req, 'uri_too_long');
    const parsed = urls.get(rawUrl);
    x.route = parsed.route;
    // A preflight is for one of the two operations' paths; a path that does not exist is 404 for OPTIONS too.
    if (parsed.result === 'bad_request') return problem(res, req, preflight ? 'not_found' : 'bad_request');
    if (preflight ? !parsed.preflight : !parsed.result.ok && parsed.result.status === 404) {
      return problem(res, req, 'not_found', [], {
        detail: parsed.route === 'detail' && parsed.preflight ? NOT_A_SLUG : NO_PATH,
      });
    }
    if (preflight) {
      x.route = 'preflight';
      res.writeHead(204, PREFLIGHT_HEADERS);
      res.end();
      return 204;
    }

    const key = req.headers['x-api-key'];
    if (typeof key !== 'string' || key === '') return problem(res, req, 'missing_api_key');
    const known = key.length <= 256 ? d.keys.peek(key) : null;
    if (known === undefined) return d.keys.lookup(key).then((owner) => withKey(x, key, owner, parsed));
    return withKey(x, key, known, parsed);
  }

  function withKey(x: Exchange, key: string, owner: KeyRecordLike | null, parsed: ParsedUrl): number | Promise<number> {
    // A key's id is `k_` + its fingerprint: no second hash on the common path.
    if (d.log) x.keyPrint = owner ? owner.id.slice(2) : d.fingerprint(key);
    if (!owner) return problem(x.res, x.req, 'invalid_api_key');
    const result = parsed.result as ParseResult;
    if (!result.ok)
      return problem(x.res, x.req, 'invalid_parameter', [], result.status === 400 ? { invalid: result.invalid } : {});
    const admission = d.quota.tryAdmit(owner.id);
    if (admission === undefined)
      return d.quota.admit(owner.id).then((a) => admitted(x, owner.id, a, parsed, result.request));
    return admitted(x, owner.id, admission, parsed, result.request);
  }

  function admitted(
    x: Exchange,
    keyId: string,
    a: Admission,
    parsed: ParsedUrl,
    request: ApiRequest,
  ): number | Promise<number> {
    const { req, res } = x;
    if (!a.ok) return problem(res, req, 'quota_exceeded', [...rateHeaders(a), 'retry-after', String(a.resetSeconds)]);
    x.keyId = keyId;
    x.admission = a;
    const pub = d.publication();
    if (pub !== lastPub) {
      // A new publication: forget the old one's files (and let it be collected once its requests are done).
      urls.clear();
      lastPub = pub;
    }
    if (parsed.pub !== pub) {
      parsed.info = prebuilt(pub, request);
      parsed.body = undefined;
      parsed.pub = pub;
    }
    const info = parsed.info;
    if (info === null) {
      if (request.kind === 'detail')
        return problem(res, req, 'not_found', rateHeaders(a), { detail: notInLane(request.lane) });
      const made = composedCached(pub, request);
      if (made) return heads.send(req, res, pub, made, made.body, a);
      return composeList(pub, request).then((f) => heads.send(req, res, pub, f, f.body, a));
    }
    let body = useSlot(parsed.body);
    if (body === undefined) body = useSlot((parsed.body = pub.bodySlot(info)));
    if (body === undefined) return pub.body(info).then((b) => heads.send(req, res, pub, info, b, a));
    return heads.send(req, res, pub, info, body, a);
  }

  return function handle(req: IncomingMessage, res: ServerResponse): void {
    const x: Exchange = {
      req,
      res,
      route: 'other',
      keyPrint: undefined,
      started: d.log ? performance.now() : 0,
      keyId: undefined,
      admission: undefined,
    };
    let status: number | Promise<number>;
    try {
      // node:http gives a response its socket only when the answers before it are sent: without one, it waits.
      status =
        res.socket === null && queuedBehind(req, res) > MAX_QUEUED_PER_CONNECTION
          ? problem(res, req, 'too_many_pipelined', ['connection', 'close'])
          : start(x);
    } catch (err) {
      fail(x, err);
      return;
    }
    if (isPromise(status))
      status.then(
        (s) => logged(x, s),
        (err: unknown) => fail(x, err),
      );
    else logged(x, status);
  };
}

/** Counts the answers waiting on the request's connection, this one included, until each is done. */
function queuedBehind(req: IncomingMessage, res: ServerResponse): number {
  const socket = req.socket as IncomingMessage['socket'] & { [QUEUED]?: number };
  const n = (socket[QUEUED] ?? 0) + 1;
  socket[QUEUED] = n;
  res.once('close', () => {
    socket[QUEUED]!--;
  });
  return n;
}

/** IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): one policy, a daily window. */
const policyOf = (limit: number) => `"daily";q=${limit};w=86400`;
const rateOf = (a: Admission) => `"daily";r=${a.remaining};t=${a.resetSeconds}`;
const rateHeaders = (a: Admission): string[] => ['ratelimit-policy', policyOf(a.limit), 'ratelimit', rateOf(a)];

/**
 * The header lists of 200 and 304 answers, each one array reused for every response: writeHead() turns the list into
 * bytes before it returns, and this thread answers one request at a time, so filling the value slots in place is
 * safe and saves building a list of 24 strings per response. Both lists start with the same names, so one set of
 * slot positions serves both. `Vary: x-api-key`: the status and the rate-limit fields depend on the key, so a browser
 * must not answer a request with another key (or none) from an answer it cached for this one (RFC 9110 12.5.5; a
 * 304 carries it as its 200 would, 15.4.5).
 */
class ResponseHeads {
  private readonly ok = [
    ...CORS_HEADERS,
    'etag',
    '',
    'last-modified',
    '',
    'cache-control',
    CACHE_CONTROL,
    'x-publication-revision',
    '',
    'x-schema-version',
    '',
    'ratelimit-policy',
    '',
    'ratelimit',
    '',
    'vary',
    'x-api-key',
    'content-type',
    JSON_TYPE,
    'content-length',
    '',
  ];
  private readonly notModified = this.ok.slice(0, this.ok.indexOf('content-type'));
  private readonly slot = (name: string) => this.ok.indexOf(name) + 1;
  private readonly at = {
    etag: this.slot('etag'),
    lastModified: this.slot('last-modified'),
    revision: this.slot('x-publication-revision'),
    schema: this.slot('x-schema-version'),
    policy: this.slot('ratelimit-policy'),
    rate: this.slot('ratelimit'),
    length: this.slot('content-length'),
  };
  private policyLimit = -1;
  private policy = '';
  private readonly buffers = new SendBuffers();

  send(
    req: IncomingMessage,
    res: ServerResponse,
    pub: Publication,
    f: FileInfo,
    body: Buffer | readonly Buffer[],
    a: Admission,
  ): number {
    const unchanged = notModified(req, f);
    const list = unchanged ? this.notModified : this.ok;
    const at = this.at;
    if (a.limit !== this.policyLimit) {
      this.policy = policyOf(a.limit);
      this.policyLimit = a.limit;
    }
    list[at.etag] = f.etag;
    list[at.lastModified] = f.lastModified;
    list[at.revision] = pub.revision;
    list[at.schema] = pub.meta.schemaVersion;
    list[at.policy] = this.policy;
    list[at.rate] = rateOf(a);
    if (unchanged) {
      res.writeHead(304, list);
      res.end();
      return 304;
    }
    const whole = Buffer.isBuffer(body);
    list[at.length] = String(whole ? body.length : f.entry.bytes);
    res.writeHead(200, list);
    if (req.method === 'HEAD') res.end();
    else if (whole) res.end(body);
    else this.buffers.end(res, body, f.entry.bytes);
    return 200;
  }
}

/** The prebuilt file that answers a request in a publication; null when it is composed (lists) or unknown (details). */
function prebuilt(pub: Publication, r: ApiRequest): FileInfo | null {
  const path = fileFor(r, {
    pageSizes: pub.meta.pageSizes,
    pages: (l) =>
      Math.max(1, Math.ceil((pub.meta.totals[`${l.lane}.${l.displayOnly ? 'display' : 'public'}`] ?? 0) / l.pageSize)),
  });
  return path === null ? null : pub.info(path);
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
    const since = parseHttpDate(ims);
    return !Number.isNaN(since) && Date.parse(f.lastModified) <= since;
  }
  return false;
}

function problem(
  res: ServerResponse,
  req: IncomingMessage,
  code: ProblemCode,
  headers: string[] = [],
  extra: { detail?: string; invalid?: InvalidParam[] } = {},
): number {
  const status = PROBLEMS[code].status;
  const body = problemBody(code, extra);
  res.writeHead(status, problemHeaders(body, headers));
  res.end(req.method === 'HEAD' ? undefined : body);
  return status;
}
