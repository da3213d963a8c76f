// The request handler: method -> route -> key -> parameters -> quota -> publication file (or composed list) ->
// conditional request -> response. Plain node:http: two routes need no framework, and every microsecond here is
// multiplied by the request rate.
//
// The common request (a key seen in the last seconds, units left in this process's lease, a body in memory) runs
// synchronously from the first byte to res.end(): each step returns its answer, or a promise only when it must wait
// (a store lookup, a lease refill, a disk or origin read), and the next step runs when it is known.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  API_PREFIX,
  MAX_SLUG_LENGTH,
  MCP_PATH,
  parseRequest,
  routeOf,
  type ApiRequest,
  type InvalidParam,
  type ListRequest,
  type ParseResult,
  type PricesAllRequest,
  type PricesRequest,
  type RouteKind,
} from '../schema/requests.js';
import type { QueryLane } from '../schema/api.js';
import { redactUrls } from '../redact.js';
import { type ComposedFile, composerOf } from './compose.js';
import { isHealthPath, serveHealth, type Health } from './health.js';
import { createMcpHandler } from './mcp.js';
import { negotiateEncoding } from './negotiate.js';
import { isOpen, serveOpen } from './open.js';
import { ALLOW, notModified, rateHeaders, responseHeaders, sendPreflight, sendProblem } from './http.js';
import type { FileInfo, Publication } from './publication.js';
import type { Admission } from './quota.js';
import { SendBuffers } from './send-buffers.js';
import { composePrices, hasPrices } from './prices.js';

export const MAX_URL_LENGTH = 4096;
/**
 * Requests answered in order behind the one being sent on a connection (HTTP/1.1 pipelining). Each holds its body
 * until its turn, a composed page a copy of its own: a client that pipelines thousands and reads nothing would hold
 * gigabytes. Past this depth, the answer is 503 `too_many_pipelined` and the connection closes once the queue is
 * sent (the client retries the rest on a new one, as RFC 9112 9.3.2 has pipelining clients do).
 */
export const MAX_QUEUED_PER_CONNECTION = 16;
const QUEUED = Symbol('answers queued on this connection');
/** What a 404 tells the developer: which of path, slug form or lane was wrong (one `not_found` code for all). */
const NO_PATH =
  'No such path: this API answers /api/v1/models, /api/v1/models/{slug}, /api/v1/metrics, ' +
  '/api/v1/catalog, /api/v1/changes and /api/v1/openapi.json (described at /docs).';
const NOT_A_SLUG =
  `No model has this slug: slugs are lower-case letters, digits and single hyphens, at most ${MAX_SLUG_LENGTH} ` +
  'characters, as in the slug field of a list item (gpt-4o).';
const notInLane = (lane: QueryLane): string =>
  lane === 'all'
    ? 'No published model has this slug.'
    : `No published model has this slug in lane ${lane}${lane === 'verified' ? ' (the default)' : ''}; lane=all covers every model.`;

const NO_HOST = 'An HTTP/1.1 request must carry a Host header (RFC 9112, section 3.2).';

export interface KeyRecordLike {
  id: string;
}
/** Answers from memory when they can (a synchronous value), from the store otherwise (a promise). */
export interface KeyLookup {
  lookup(key: string): KeyRecordLike | null | Promise<KeyRecordLike | null>;
}
export interface QuotaCheck {
  admit(keyId: string): Admission | Promise<Admission>;
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
  /** What GET /healthz checks; without it, /healthz is a path like any other (404). */
  health?: Health;
}

type Route = 'preflight' | RouteKind | 'mcp' | 'healthz' | 'other';
interface ParsedUrl {
  route: Route;
  result: ParseResult | 'bad_request';
  /** Whether a CORS preflight for this target passes: the path has the shape of one of the two operations. */
  preflight: boolean;
}

/** Raw request target -> its parse: the same URLs come back all day. Bounded (20,000 targets of at most 512 bytes);
 * the oldest entry goes first. */
class UrlCache {
  private map = new Map<string, ParsedUrl>();
  constructor(private readonly max: number) {}
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
    return { route: 'other', result: 'bad_request', preflight: false };
  }
  const result = parseRequest(url.pathname, url.searchParams);
  const route: Route = result.ok ? result.request.kind : (routeOf(url.pathname) ?? 'other');
  // A slug that is not canonical (/api/v1/models/GPT-4o) still passes the preflight: a page then reads the GET's 404
  // problem body, not a CORS network error.
  const preflight =
    route === 'list' ||
    route === 'metrics' ||
    route === 'catalog' ||
    route === 'changes' ||
    route === 'openapi' ||
    route === 'prices-all' ||
    route === 'prices' ||
    (route === 'detail' && /^[^/]+$/.test(url.pathname.slice(API_PREFIX.length + 1)));
  return { route, result, preflight };
}

/** A step's outcome: the status it answered with, or a promise of it when the step had to wait. */
type Answered = number | Promise<number>;

/**
 * Runs `then` on a value that is usually at hand and sometimes must be waited for (a key or quota units from the
 * store, a body from the disk). The common request never waits and stays synchronous from its first byte to
 * res.end(): that is most of the gateway's speed, so the steps take their inputs through here.
 */
function next<T>(value: T | Promise<T>, x: Exchange, step: (x: Exchange, v: T) => Answered): Answered {
  return value instanceof Promise ? value.then((v) => step(x, v)) : step(x, value);
}

/** One request in flight: what its log line needs besides the request itself. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  route: Route;
  keyPrint: string | undefined;
  /** The tools a POST /mcp called (gateway/mcp.ts), for the log line. */
  tool: string | undefined;
  started: number;
  /** What the steps found so far: they take it from here, so that the common path allocates no closures. */
  key: string;
  parsed: ParsedUrl | null;
  /** Once admitted: whose unit it spent, and the admission (a request that then fails gets its unit back). */
  keyId: string | undefined;
  admission: Admission | undefined;
  pub: Publication | null;
  file: FileInfo | null;
  /** The coding the answer is sent in (negotiated once admitted). */
  coding: 'br' | 'gzip' | 'identity';
}

export function createHandler(d: GatewayDeps) {
  const urls = new UrlCache(20_000);
  const sendBuffers = new SendBuffers();
  const mcp = createMcpHandler(d);

  return function handle(req: IncomingMessage, res: ServerResponse): void {
    const x: Exchange = {
      req,
      res,
      route: 'other',
      keyPrint: undefined,
      tool: undefined,
      started: d.log ? performance.now() : 0,
      key: '',
      parsed: null,
      keyId: undefined,
      admission: undefined,
      pub: null,
      file: null,
      coding: 'identity',
    };
    let status: Answered;
    try {
      status = answer(x);
    } catch (err) {
      fail(x, err);
      return;
    }
    if (status instanceof Promise)
      status.then(
        (s) => logged(x, s),
        (err: unknown) => fail(x, err),
      );
    else logged(x, status);
  };

  // The steps, in order. Before the key each returns an answer or undefined (the next step's turn); from the key on,
  // each hands the next its input through next(), waiting only when that input is not at hand.

  function answer(x: Exchange): Answered {
    return (
      tooManyPipelined(x) ??
      missingHost(x) ??
      health(x) ??
      toMcp(x) ??
      methodNotAllowed(x) ??
      badTarget(x) ??
      preflight(x) ??
      openAnswer(x) ??
      lookUpKey(x)
    );
  }

  /** node:http gives a response its socket only when the answers before it are sent: without one, it waits. */
  function tooManyPipelined(x: Exchange): Answered | undefined {
    if (x.res.socket === null && queuedBehind(x.req, x.res) > MAX_QUEUED_PER_CONNECTION)
      return sendProblem(x.res, x.req, 'too_many_pipelined', ['connection', 'close']);
  }

  /** node:http's own check (requireHostHeader) answers a bare 400 without CORS headers or a problem body. */
  function missingHost(x: Exchange): Answered | undefined {
    const { req } = x;
    if (req.headers.host === undefined && req.httpVersionMinor === 1 && req.httpVersionMajor === 1)
      return sendProblem(x.res, req, 'bad_request', ['connection', 'close'], { detail: NO_HOST });
  }

  /** GET /healthz: no key, no quota (gateway/health.ts). */
  function health(x: Exchange): Answered | undefined {
    if (d.health && isHealthPath(x.req.url ?? '/')) {
      x.route = 'healthz';
      return serveHealth(x.req, x.res, d.health);
    }
  }

  function toMcp(x: Exchange): Answered | undefined {
    const rawUrl = x.req.url ?? '/';
    if (rawUrl === MCP_PATH || rawUrl.startsWith(`${MCP_PATH}?`)) {
      x.route = 'mcp';
      return mcp(x.req, x.res, x);
    }
  }

  function methodNotAllowed(x: Exchange): Answered | undefined {
    const method = x.req.method;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS')
      return sendProblem(x.res, x.req, 'method_not_allowed', ['allow', ALLOW]);
  }

  /** Parses the target; a target too long, unreadable, or of no path this API has is answered here. */
  function badTarget(x: Exchange): Answered | undefined {
    const { req, res } = x;
    const rawUrl = req.url ?? '/';
    if (rawUrl.length > MAX_URL_LENGTH) return sendProblem(res, req, 'uri_too_long');
    const parsed = urls.get(rawUrl);
    x.route = parsed.route;
    x.parsed = parsed;
    // A preflight is for one of the operations' paths; a path that does not exist is 404 for OPTIONS too.
    const isPreflight = req.method === 'OPTIONS';
    if (parsed.result === 'bad_request') return sendProblem(res, req, isPreflight ? 'not_found' : 'bad_request');
    if (isPreflight ? !parsed.preflight : !parsed.result.ok && parsed.result.status === 404) {
      return sendProblem(res, req, 'not_found', [], {
        detail: parsed.route === 'detail' && parsed.preflight ? NOT_A_SLUG : NO_PATH,
      });
    }
  }

  function preflight(x: Exchange): Answered | undefined {
    if (x.req.method !== 'OPTIONS') return undefined;
    x.route = 'preflight';
    return sendPreflight(x.res);
  }

  /** The OpenAPI document and /docs need no key: neither does being told of a bad parameter there. */
  function openAnswer(x: Exchange): Answered | undefined {
    const r = x.parsed!.result as ParseResult;
    if (!r.ok && r.status === 400 && x.route === 'openapi')
      return sendProblem(x.res, x.req, 'invalid_parameter', [], { invalid: r.invalid });
    if (r.ok && isOpen(r.request)) return serveOpen(x.req, x.res, d.publication(), r.request);
  }

  function lookUpKey(x: Exchange): Answered {
    const key = x.req.headers['x-api-key'];
    if (typeof key !== 'string' || key === '') return sendProblem(x.res, x.req, 'missing_api_key');
    x.key = key;
    return next(key.length <= 256 ? d.keys.lookup(key) : null, x, withOwner);
  }

  /** The key's owner, then the parameters: a bad parameter is told only to a known key, and counts against nothing. */
  function withOwner(x: Exchange, owner: KeyRecordLike | null): Answered {
    const { req, res } = x;
    // A key's id is `k_` + its fingerprint: no second hash on the common path.
    if (d.log) x.keyPrint = owner ? owner.id.slice(2) : d.fingerprint(x.key);
    if (!owner) return sendProblem(res, req, 'invalid_api_key');
    const result = x.parsed!.result as ParseResult;
    if (!result.ok)
      return sendProblem(res, req, 'invalid_parameter', [], result.status === 400 ? { invalid: result.invalid } : {});
    x.keyId = owner.id;
    return next(d.quota.admit(owner.id), x, admitted);
  }

  function admitted(x: Exchange, a: Admission): Answered {
    if (!a.ok)
      return sendProblem(x.res, x.req, 'quota_exceeded', [...rateHeaders(a), 'retry-after', String(a.resetSeconds)]);
    x.admission = a;
    return resolve(x);
  }

  /**
   * The file that answers, prebuilt or composed, and the coding it is sent in: negotiated once, here. A composed
   * answer can be sent in any coding, a stored body in those it has; nothing acceptable is answered in identity
   * (docs/api.md "Compressed responses").
   */
  function resolve(x: Exchange): Answered {
    const request = (x.parsed!.result as Extract<ParseResult, { ok: true }>).request as ApiRequest;
    const pub = (x.pub = d.publication());
    const file = (x.file = pub.prebuilt(request));
    const pickDay = file === null && (request.kind === 'prices-all' || request.kind === 'prices') && hasPrices(pub);
    if (file === null && request.kind !== 'list' && !pickDay) return notPrebuilt(x, request);
    if (file === null || file.encoded !== null)
      x.coding = negotiateEncoding(x.req.headers['accept-encoding']) ?? 'identity';
    if (pickDay) {
      const day = request as (PricesRequest & { at: string }) | PricesAllRequest;
      return next(composePrices(pub, day), x, (x2, f) => (f ? withComposed(x2, f) : notPrebuilt(x2, request)));
    }
    if (file === null) {
      const composer = composerOf(pub);
      return next(composer.cached(request as ListRequest) ?? composer.compose(request as ListRequest), x, withComposed);
    }
    // A 304 needs no body: none is read for it.
    if (notModified(x.req, file)) return unchanged(x);
    if (x.coding !== 'identity')
      return next(pub.cachedEncoded(file, x.coding) ?? pub.encodedBody(file, x.coding), x, send);
    return next(pub.cachedBody(file) ?? pub.body(file), x, send);
  }

  /** A request the publication has no file for: a slug not in the lane, a revision the feed no longer keeps. */
  function notPrebuilt(x: Exchange, request: ApiRequest): number {
    const rate = rateHeaders(x.admission!);
    if (request.kind === 'detail')
      return sendProblem(x.res, x.req, 'not_found', rate, { detail: notInLane(request.lane) });
    if (request.kind === 'changes') return sendProblem(x.res, x.req, 'resync_required', rate);
    if (request.kind === 'prices')
      return sendProblem(x.res, x.req, 'not_found', rate, { detail: 'No model of this slug has dated prices.' });
    return sendProblem(x.res, x.req, 'not_found', rate, { detail: 'This publication was built before this path.' });
  }

  function withComposed(x: Exchange, f: ComposedFile | { invalid: InvalidParam[] }): number {
    if ('invalid' in f) return refused(x, f.invalid);
    x.file = f;
    if (notModified(x.req, f)) return unchanged(x);
    // Compressed only when it is sent: a 304 needs no body.
    return send(x, x.coding === 'identity' ? f.body : composerOf(x.pub!).encoded(f, x.coding));
  }

  /** A 400 known only once admitted (a filter's developer the publication does not have): not counted. */
  function refused(x: Exchange, invalid: InvalidParam[]): number {
    d.quota.refund(x.keyId!, x.admission!);
    x.admission = undefined;
    return sendProblem(x.res, x.req, 'invalid_parameter', [], { invalid });
  }

  function unchanged(x: Exchange): number {
    x.res.writeHead(304, responseHeaders(x.pub!, x.file!, x.admission!, x.coding, null));
    x.res.end();
    return 304;
  }

  function send(x: Exchange, body: Buffer | readonly Buffer[]): number {
    const { req, res } = x;
    const f = x.file!;
    const whole = Buffer.isBuffer(body);
    res.writeHead(200, responseHeaders(x.pub!, f, x.admission!, x.coding, whole ? body.length : f.entry.bytes));
    if (req.method === 'HEAD') res.end();
    else if (whole) res.end(body);
    else sendBuffers.end(res, body, f.entry.bytes);
    return 200;
  }

  function logged(x: Exchange, status: number): void {
    if (!d.log || x.route === 'healthz') return; // a probe every few seconds is not a request of the API
    // The answer is sent by then; a failing log call must not touch the response (nor become an unhandled rejection).
    try {
      d.log.info({
        method: x.req.method,
        route: x.route,
        tool: x.tool,
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
      d.log?.error({ err: redactUrls(String(err)), route: x.route }, 'request failed');
    } catch {
      /* as above */
    }
    if (x.admission !== undefined) d.quota.refund(x.keyId!, x.admission); // not answered: not counted
    // A problem answer only on an untouched response: a writeHead() that threw half-way has already set the status
    // line (and for a 304, no body), so the connection is closed instead.
    if (!x.res.headersSent && x.res.statusMessage === undefined) sendProblem(x.res, x.req, 'unavailable');
    else x.res.destroy();
    logged(x, 503);
    d.onUnavailable?.();
  }
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
