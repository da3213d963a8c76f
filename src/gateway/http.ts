// The HTTP of the gateway's answers, one concern per function: the headers an answer carries (CORS, caching,
// rate-limit fields, validators), whether a conditional request is met, and how a preflight or a problem is written.
// app.ts decides which answer a request gets; open.ts and client-errors.ts answer with the same headers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JSON_CONTENT_TYPE } from '../schema/primitives.js';
import { PROBLEM_CONTENT_TYPE, PROBLEMS, problemBody, type ProblemCode } from '../schema/problems.js';
import type { InvalidParam } from '../schema/requests.js';
import type { FileInfo, Publication } from './publication.js';
import type { Admission } from './quota.js';
import { parseHttpDate } from './validators.js';

export const ALLOW = 'GET, HEAD, OPTIONS';

/** CORS for browser clients: any origin may read the API (a key is needed anyway), and these headers too. */
export const CORS_HEADERS = [
  'access-control-allow-origin',
  '*',
  'access-control-expose-headers',
  'ETag, Last-Modified, Retry-After, RateLimit, RateLimit-Policy, X-Publication-Revision, X-Schema-Version',
] as const;

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

/** Keyed, per-key rate-limited answers: browsers and apps may reuse them for five minutes, shared caches must not. */
export const CACHE_CONTROL = 'private, max-age=300';
/** Answers without a key (the OpenAPI document, /docs): the same for every client, so shared caches may keep them. */
export const PUBLIC_CACHE_CONTROL = 'public, max-age=300';
/** /docs references its script by a path that names the script's version: it may be kept a day. */
export const SCRIPT_CACHE_CONTROL = 'public, max-age=86400';

/** IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): one policy, a daily window. */
const policyOf = (limit: number) => `"daily";q=${limit};w=86400`;
const rateOf = (a: Admission) => `"daily";r=${a.remaining};t=${a.resetSeconds}`;
export const rateHeaders = (a: Admission): string[] => ['ratelimit-policy', policyOf(a.limit), 'ratelimit', rateOf(a)];

const policies = new Map<number, string>();
/** The policy field of a limit, made once per limit. */
const policyField = (limit: number): string => {
  let p = policies.get(limit);
  if (p === undefined) policies.set(limit, (p = policyOf(limit)));
  return p;
};

/**
 * The headers of a 200 (with its length) or a 304 (length null: a 304 carries the validators and fields its 200
 * would, but no content headers). `Vary: x-api-key`: the status and the rate-limit fields depend on the key, so a
 * browser must not answer a request with another key (or none) from an answer it cached for this one (RFC 9110
 * 12.5.5; a 304 carries it as its 200 would, 15.4.5). `Accept-Encoding` beside it for every answer that has other
 * codings (a stored body with representations, a composed answer): a cache must not give a br body to a client that
 * did not ask for it.
 */
export function responseHeaders(
  pub: Pick<Publication, 'revision' | 'meta'>,
  f: FileInfo,
  a: Admission,
  coding: 'br' | 'gzip' | 'identity',
  length: number | null,
): string[] {
  const h = [
    CORS_HEADERS[0],
    CORS_HEADERS[1],
    CORS_HEADERS[2],
    CORS_HEADERS[3],
    'etag',
    coding === 'identity' ? f.etag : coding === 'br' ? f.etagBr : f.etagGzip,
    'last-modified',
    f.lastModified,
    'cache-control',
    CACHE_CONTROL,
    'x-publication-revision',
    pub.revision,
    'x-schema-version',
    pub.meta.schemaVersion,
    'ratelimit-policy',
    policyField(a.limit),
    'ratelimit',
    rateOf(a),
    'vary',
    f.encoded !== null || 'body' in f ? 'accept-encoding, x-api-key' : 'x-api-key',
  ];
  if (length !== null) {
    h.push('content-type', JSON_CONTENT_TYPE, 'content-length', String(length));
    if (coding !== 'identity') h.push('content-encoding', coding);
  }
  return h;
}

/**
 * RFC 9110 13.1.2 and 13.2.2: If-None-Match (a list, weak comparison) wins over If-Modified-Since. The ETag of any
 * coding of a body validates every coding of it (the `-br`/`-gz` suffix is stripped): they decode to the same bytes,
 * so a client that now asks in another coding keeps what it has (docs/api.md "Compressed responses").
 */
export function notModified(req: IncomingMessage, f: FileInfo): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    if (inm.trim() === '*') return true;
    const mine = f.etag;
    for (const raw of inm.split(',')) {
      let tag = raw.trim();
      if (tag.startsWith('W/')) tag = tag.slice(2);
      if (tag.endsWith('-br"') || tag.endsWith('-gz"')) tag = `${tag.slice(0, -4)}"`;
      if (tag === mine) return true;
    }
    return false;
  }
  const ims = req.headers['if-modified-since'];
  if (ims !== undefined && !f.lastModifiedIsFloor) {
    const since = parseHttpDate(ims);
    return !Number.isNaN(since) && Date.parse(f.lastModified) <= since;
  }
  return false;
}

/** A CORS preflight that passes: 204 with the methods and headers a page may use. */
export function sendPreflight(res: ServerResponse): number {
  res.writeHead(204, PREFLIGHT_HEADERS);
  res.end();
  return 204;
}

/** The headers of every problem answer (`extra` after the CORS ones): the handler's and those for unparsable requests. */
export function problemHeaders(body: string, extra: readonly string[] = []): string[] {
  return [
    ...CORS_HEADERS,
    ...extra,
    'content-type',
    PROBLEM_CONTENT_TYPE,
    'content-length',
    String(Buffer.byteLength(body)),
    'cache-control',
    'no-store',
  ];
}

/** Answers with a problem body (none for HEAD); returns its status. */
export function sendProblem(
  res: ServerResponse,
  req: IncomingMessage,
  code: ProblemCode,
  headers: readonly string[] = [],
  extra: { detail?: string; invalid?: InvalidParam[] } = {},
): number {
  const status = PROBLEMS[code].status;
  const body = problemBody(code, extra);
  res.writeHead(status, problemHeaders(body, headers));
  res.end(req.method === 'HEAD' ? undefined : body);
  return status;
}
