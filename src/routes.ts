// Requests: a URL is canonicalized (validated, defaults filled, includes sorted), then mapped to the prebuilt file
// that answers it (publication/layout.ts), or to none when the answer is composed.
import { INCLUDES, QUERY_LANES, SORTS, type Include, type QueryLane, type Sort } from './schema/api.js';
import { LOCALES, type Locale } from './schema/source.js';
import { detailFile, listFile } from './publication/layout.js';

export const API_PREFIX = '/api/v1/models';
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
export const MAX_QUERY_LENGTH = 200;
const MAX_PAGE = 1_000_000;
const SLUG_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const MAX_SLUG_LENGTH = 160;

export interface Variant {
  locale: Locale;
  lane: QueryLane;
  displayOnly: boolean;
  include: Include[]; // sorted, unique
}
export interface DetailRequest extends Variant {
  kind: 'detail';
  slug: string;
}
export interface ListRequest extends Variant {
  kind: 'list';
  sort: Sort;
  page: number;
  pageSize: number;
  q: string | null;
}
export type ApiRequest = DetailRequest | ListRequest;

export interface InvalidParam {
  name: string;
  reason: string;
}
export type ParseResult =
  | { ok: true; request: ApiRequest }
  | { ok: false; status: 400; invalid: InvalidParam[] }
  | { ok: false; status: 404; reason: string };

/** How to send a parameter a client sent in pieces (`what`: its name, or "it"): once, and include as one list. */
const sendOnce = (name: string, what = name) =>
  `send ${what} once${name === 'include' ? ', as a comma-separated list (include=benchmarks,pricing)' : ''}`;
const LIST_PARAMS = new Set(['q', 'page', 'page_size', 'sort', 'locale', 'include', 'lane', 'includeDisplayOnly']);
const DETAIL_PARAMS = new Set(['locale', 'include', 'lane', 'includeDisplayOnly']);

/**
 * Parse a request path and query. Unknown parameters are ignored (clients add cache-busters); a known parameter
 * given twice, or in the bracketed array form (include[], include[0]), is rejected, because first-wins or ignoring
 * it would silently hide a client bug.
 */
export function parseRequest(pathname: string, params: URLSearchParams): ParseResult {
  let kind: 'list' | 'detail';
  let slug = '';
  if (pathname === API_PREFIX) kind = 'list';
  else if (pathname.startsWith(`${API_PREFIX}/`)) {
    slug = pathname.slice(API_PREFIX.length + 1);
    // Encoded bytes, dots, slashes, backslashes and NUL all fail the slug pattern: never a path to the disk.
    if (slug.length > MAX_SLUG_LENGTH || !SLUG_RE.test(slug))
      return { ok: false, status: 404, reason: 'no such model' };
    kind = 'detail';
  } else return { ok: false, status: 404, reason: 'no such path' };

  const allowed = kind === 'list' ? LIST_PARAMS : DETAIL_PARAMS;
  const invalid: InvalidParam[] = [];
  const values = new Map<string, string>();
  for (const [name, value] of params) {
    if (!allowed.has(name)) {
      // include[]=a&include[]=b (axios) or include[0]=a&include[1]=b (qs's default) is a list meant for a known
      // parameter, not a cache-buster: ignored, the request would silently lose it. Named once per parameter.
      const base = /^(.+)\[\d*\]$/.exec(name)?.[1] ?? '';
      if (allowed.has(base) && !invalid.some((p) => p.name.startsWith(`${base}[`))) {
        invalid.push({ name, reason: `not a parameter; ${sendOnce(base)}` });
      }
      continue;
    }
    // Clients that serialize a list as repeated keys (URLSearchParams.append, Python requests) need the list form.
    if (values.has(name)) invalid.push({ name, reason: `given more than once; ${sendOnce(name, 'it')}` });
    else values.set(name, value);
  }

  const locale = pickEnum(values, 'locale', LOCALES, 'en', invalid);
  const lane = pickEnum(values, 'lane', QUERY_LANES, 'verified', invalid);
  const include = parseInclude(values.get('include'), invalid);
  let displayOnly = false;
  const disp = values.get('includeDisplayOnly');
  if (disp !== undefined) {
    if (disp === 'true') displayOnly = true;
    else if (disp !== 'false') invalid.push({ name: 'includeDisplayOnly', reason: 'must be true or false' });
  }
  if (kind === 'detail') {
    if (invalid.length) return { ok: false, status: 400, invalid };
    return { ok: true, request: { kind, slug, locale, lane, displayOnly, include } };
  }
  const sort = pickEnum(values, 'sort', SORTS, 'popular', invalid);
  const page = parseInteger(values.get('page'), 'page', 1, MAX_PAGE, 1, invalid);
  const pageSize = parseInteger(values.get('page_size'), 'page_size', 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE, invalid);
  let q: string | null = null;
  const rawQ = values.get('q');
  if (rawQ !== undefined) {
    const trimmed = rawQ.trim();
    if (trimmed.length > MAX_QUERY_LENGTH)
      invalid.push({ name: 'q', reason: `longer than ${MAX_QUERY_LENGTH} characters` });
    else if (/[\u0000-\u001f\u007f-\u009f\ufffd]/.test(trimmed))
      invalid.push({ name: 'q', reason: 'holds control characters or invalid UTF-8' });
    else if (trimmed) q = trimmed;
  }
  if (invalid.length) return { ok: false, status: 400, invalid };
  return { ok: true, request: { kind, locale, lane, displayOnly, include, sort, page, pageSize, q } };
}

function pickEnum<T extends string>(
  values: Map<string, string>,
  name: string,
  allowed: readonly T[],
  fallback: T,
  invalid: InvalidParam[],
): T {
  const v = values.get(name);
  if (v === undefined) return fallback;
  if ((allowed as readonly string[]).includes(v)) return v as T;
  invalid.push({ name, reason: `must be one of ${allowed.join(', ')}` });
  return fallback;
}

function parseInteger(
  v: string | undefined,
  name: string,
  min: number,
  max: number,
  fallback: number,
  invalid: InvalidParam[],
): number {
  if (v === undefined) return fallback;
  if (!/^\d{1,9}$/.test(v)) {
    invalid.push({ name, reason: `must be a whole number from ${min} to ${max}` });
    return fallback;
  }
  const n = Number(v);
  if (n < min || n > max) {
    invalid.push({ name, reason: n > max ? `must be at most ${max}` : `must be at least ${min}` });
    return fallback;
  }
  return n;
}

function parseInclude(v: string | undefined, invalid: InvalidParam[]): Include[] {
  if (v === undefined || v === '') return [];
  const set = new Set<Include>();
  for (const part of v.split(',')) {
    if ((INCLUDES as readonly string[]).includes(part)) set.add(part as Include);
    else {
      invalid.push({
        name: 'include',
        reason: `${JSON.stringify(part.slice(0, 40))} is not one of ${INCLUDES.join(', ')}`,
      });
      return [];
    }
  }
  return INCLUDES.filter((i) => set.has(i));
}

/**
 * The prebuilt file that answers a canonical request, or null when it must be composed
 * (a free-text query, a page size that was not prebuilt, or a page past the last one).
 */
export function fileFor(
  r: ApiRequest,
  prebuilt: { pageSizes: readonly number[]; pages: (r: ListRequest) => number },
): string | null {
  if (r.kind === 'detail') return detailFile(r);
  if (r.q !== null || !prebuilt.pageSizes.includes(r.pageSize) || r.page > prebuilt.pages(r)) return null;
  return listFile(r);
}
