// The request side of the contract: a URL is canonicalized (validated, defaults filled, includes sorted) into a
// request, or refused with each bad parameter named. The OpenAPI document takes its parameters from here;
// publication/layout.ts's fileFor maps a request to the prebuilt file that answers it, and the gateway composes the
// rest (q, filters, page sizes not prebuilt) or serves it itself (GET /docs and its script: gateway/open.ts).
import { z } from 'zod';
import {
  CAPABILITY_KEYS,
  CapabilityKey,
  Include,
  INCLUDES,
  LIFECYCLE_STATUSES,
  LifecycleStatus,
  QUERY_LANES,
  QueryLane,
  Sort,
  SORTS,
} from './api.js';
import { RevisionId, SLUG_RE } from './primitives.js';
import { CAPABILITY_MODALITIES, Locale, LOCALES, ProviderId, realMonthOrDay } from './source.js';

export const API_PREFIX = '/api/v1/models';
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
export const MAX_QUERY_LENGTH = 200;
const MAX_PAGE = 1_000_000;
/** The largest token count a filter takes (nine digits, as every whole-number parameter). */
const MAX_TOKENS = 999_999_999;
const MAX_PRICE = 9_999_999;
const MAX_DEVELOPER_LENGTH = 100;
const MAX_PROVIDER_LENGTH = 100;
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
  /** null: no filter parameter given (or only empty ones). */
  filter: ListFilter | null;
}
/**
 * The list filters in canonical form: lists sorted and unique, input_modalities and output_modalities folded into
 * capability keys (input:image), so requests that mean the same are one request (one cache entry, one ETag).
 */
export interface ListFilter {
  /** Capability keys, all required. */
  capabilities: string[];
  /** Developer names as published (exact, case included), any of. */
  developer: string[];
  min_context_window: number | null;
  min_output_tokens: number | null;
  /** USD per million tokens; models without a price in the lane do not match. */
  max_blended_price: number | null;
  open_weights: boolean | null;
  /** Provider ids as in an offer's `provider`, any of. */
  provider: string[];
  /** Lifecycle statuses, any of. */
  status: LifecycleStatus[];
  /** true: a dated snapshot is left out when one of its aliases is in the same lane and variant. */
  exclude_snapshots: boolean;
}
export interface MetricsRequest {
  kind: 'metrics';
  locale: Locale;
}
export interface CatalogRequest extends Omit<Variant, 'include'> {
  kind: 'catalog';
}
/** The semantic changes of recent publications; `since`: only those after that revision. */
export interface ChangesRequest {
  kind: 'changes';
  since: string | null;
}
/** A model's dated prices; `at`: only the rows in force that day (YYYY-MM-DD). */
export interface PricesRequest {
  kind: 'prices';
  slug: string;
  at: string | null;
}
/** Every model's headline price in force on a day. */
export interface PricesAllRequest {
  kind: 'prices-all';
  at: string;
}
/** The requests that need a key and count against its quota, each answered by a file of the publication. */
export type ApiRequest =
  | DetailRequest
  | ListRequest
  | MetricsRequest
  | CatalogRequest
  | ChangesRequest
  | PricesRequest
  | PricesAllRequest;
/** The requests answered without a key or quota: the OpenAPI document, the reference page and its script, llms.txt. */
export interface OpenRequest {
  kind: 'openapi' | 'docs' | 'docs-script' | 'llms';
}

export const METRICS_PATH = '/api/v1/metrics';
export const CHANGES_PATH = '/api/v1/changes';
export const CATALOG_PATH = '/api/v1/catalog';
export const PRICES_PATH = '/api/v1/prices';
/** The last segment of a model's dated prices: /api/v1/models/{slug}/prices. */
export const PRICES_SEGMENT = '/prices';
export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/docs';
export const DOCS_SCRIPT_PATH = '/docs/redoc.standalone.js';
export const LLMS_PATH = '/llms.txt';
/** The MCP server (gateway/mcp.ts): a JSON-RPC endpoint, routed before any of these. */
export const MCP_PATH = '/mcp';
const FIXED_PATHS: Readonly<Record<string, 'metrics' | 'catalog' | 'changes' | 'prices-all' | OpenRequest['kind']>> = {
  [METRICS_PATH]: 'metrics',
  [PRICES_PATH]: 'prices-all',
  [CHANGES_PATH]: 'changes',
  [CATALOG_PATH]: 'catalog',
  [OPENAPI_PATH]: 'openapi',
  [DOCS_PATH]: 'docs',
  [DOCS_SCRIPT_PATH]: 'docs-script',
  [LLMS_PATH]: 'llms',
};
export type RouteKind = (ApiRequest | OpenRequest)['kind'];
/** Which operation a path is for, whatever its parameters (`detail` for any one segment under /api/v1/models). */
export function routeOf(pathname: string): RouteKind | null {
  if (pathname === API_PREFIX) return 'list';
  if (pathname.startsWith(`${API_PREFIX}/`))
    return pathname.endsWith(PRICES_SEGMENT) && pathname.indexOf('/', API_PREFIX.length + 1) === pathname.length - 7
      ? 'prices'
      : 'detail';
  return FIXED_PATHS[pathname] ?? null;
}

export interface InvalidParam {
  name: string;
  reason: string;
}
export type ParseResult =
  | { ok: true; request: ApiRequest | OpenRequest }
  | { ok: false; status: 400; invalid: InvalidParam[] }
  | { ok: false; status: 404; reason: string };

/** The comma-list parameters, with an example of the form that works. */
const LIST_FORM: Readonly<Record<string, string>> = {
  include: 'include=benchmarks,pricing',
  capabilities: 'capabilities=input:image,tool_use',
  input_modalities: 'input_modalities=text,image',
  output_modalities: 'output_modalities=text,audio',
  developer: 'developer=OpenAI,Anthropic',
  provider: 'provider=groq,amazon-bedrock',
  status: 'status=active,beta',
};
/** How to send a parameter a client sent in pieces (`what`: its name, or "it"): once, and a list as one value. */
const sendOnce = (name: string, what = name) =>
  `send ${what} once${LIST_FORM[name] ? `, as a comma-separated list (${LIST_FORM[name]})` : ''}`;
/** The comma-list parameters, which may also be given repeatedly (include=a&include=b reads as include=a,b). */
const isListValued = (name: string): boolean => Object.hasOwn(LIST_FORM, name);
export const VARIANT_PARAMS = ['locale', 'include', 'lane', 'includeDisplayOnly'] as const;
export const FILTER_PARAMS = [
  'capabilities',
  'input_modalities',
  'output_modalities',
  'developer',
  'min_context_window',
  'min_output_tokens',
  'max_blended_price',
  'open_weights',
  'provider',
  'status',
  'exclude_snapshots',
] as const;
export const LIST_PARAMS = ['q', 'page', 'page_size', 'sort', ...VARIANT_PARAMS, ...FILTER_PARAMS] as const;
export const DETAIL_PARAMS = VARIANT_PARAMS;
/** The catalog holds every include already. */
export const CATALOG_PARAMS = ['locale', 'lane', 'includeDisplayOnly'] as const;
/** Metric labels are not localized yet, but every answer's envelope names its locale. */
export const METRICS_PARAMS = ['locale'] as const;
/** The feed's one parameter: the revision a client last read (absent: every publication the feed keeps). */
export const CHANGES_PARAMS = ['since'] as const;
/** The price routes' one parameter: a day (optional on a model's prices, required on GET /api/v1/prices). */
export const PRICES_PARAMS = ['at'] as const;
/**
 * Every query parameter as a zod schema with its description: the OpenAPI document's parameters follow from these
 * (parseRequest above checks the values, with messages that name what was wrong).
 */
export const QUERY_PARAMETERS = {
  locale: Locale.default('en').describe('Language of the descriptions; every other field is the same in each locale.'),
  include: z
    .array(Include)
    .describe(
      'Sections to add, as one comma-separated list in any order: benchmarks (every metric with rank and nearby models; ' +
        'on list items the groups and category scores), capabilities, pricing.',
    ),
  lane: QueryLane.default('verified').describe(
    'verified: verified records only; provisional: models with provisional records, from those; ' +
      'all: every public model, from every record.',
  ),
  includeDisplayOnly: z
    .boolean()
    .default(false)
    .describe('true: manual display-only overrides replace the name, descriptions and links they set.'),
  q: z
    .string()
    .max(MAX_QUERY_LENGTH)
    .describe(
      'Search: case- and accent-insensitive; matches names and slugs from the start of a word (also written without ' +
        'separators: gpt4o finds gpt-4o), or every word in the name, slug or description. Results are ordered by ' +
        'relevance, then by sort.',
    ),
  page: z
    .int()
    .min(1)
    .max(MAX_PAGE)
    .default(1)
    .describe('One-based page; past the last page the answer is 200 with no models and the true total.'),
  page_size: z
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .describe(`Models per page, at most ${MAX_PAGE_SIZE}.`),
  sort: Sort.default('popular').describe(
    'popular: served by more providers first; newest: release date; recent: newest activity (update or measurement); ' +
      'alphabetical: by name. Every order ends with the slug, so pages never repeat or skip a model.',
  ),
  capabilities: z
    .array(CapabilityKey)
    .describe('Keeps the models whose capabilities.keys hold every key listed (comma-separated).'),
  input_modalities: z
    .array(z.enum(CAPABILITY_MODALITIES))
    .describe(
      'Keeps the models that accept every modality listed: input_modalities=image is capabilities=input:image.',
    ),
  output_modalities: z
    .array(z.enum(CAPABILITY_MODALITIES))
    .describe(
      'Keeps the models that produce every modality listed: output_modalities=audio is capabilities=output:audio.',
    ),
  developer: z
    .array(z.string().max(MAX_DEVELOPER_LENGTH))
    .describe(
      'Keeps the models by any developer listed (comma-separated), names exactly as published in developer. ' +
        'A name no model of the publication has is a 400 that lists them.',
    ),
  min_context_window: z
    .int()
    .min(0)
    .max(MAX_TOKENS)
    .describe('Keeps the models whose context_window_tokens is at least this (0 there means unknown).'),
  min_output_tokens: z
    .int()
    .min(0)
    .max(MAX_TOKENS)
    .describe('Keeps the models whose max_output_tokens is at least this (0 there means unknown).'),
  max_blended_price: z
    .number()
    .min(0)
    .max(MAX_PRICE)
    .describe(
      'Keeps the models with a price in the lane whose blended price ((3 x input + output) / 4, USD per million ' +
        'tokens) is at most this.',
    ),
  open_weights: z.boolean().describe('Keeps the models whose weights are open (true) or not (false).'),
  provider: z
    .array(ProviderId.max(MAX_PROVIDER_LENGTH))
    .describe(
      "Keeps the models with an offer at any provider listed (comma-separated provider ids, as in an offer's " +
        'provider). An id no offer of the publication has is a 400 that lists them.',
    ),
  status: z
    .array(LifecycleStatus)
    .describe('Keeps the models whose lifecycle.status is any of those listed (comma-separated).'),
  exclude_snapshots: z
    .boolean()
    .default(false)
    .describe(
      'true: leaves out a dated snapshot (claude-opus-4-5-20251101) when one of its aliases (claude-opus-4-5) is in ' +
        'the same lane.',
    ),
  since: RevisionId.describe(
    'The X-Publication-Revision of the last answer you read: the feed then lists only the publications after it. ' +
      'Without it, every publication the feed keeps.',
  ),
  at: z.iso
    .date()
    .describe('A day, YYYY-MM-DD (UTC): only the prices in force that day (effective_from <= at < effective_to).'),
} satisfies Record<string, z.ZodType>;
export type QueryParameter = keyof typeof QUERY_PARAMETERS;

/** The parameters of each operation that takes a query (the /docs page ignores its query). */
const PARAMS: Readonly<Record<Exclude<RouteKind, 'docs' | 'docs-script' | 'llms'>, readonly string[]>> = {
  list: LIST_PARAMS,
  detail: DETAIL_PARAMS,
  metrics: METRICS_PARAMS,
  catalog: CATALOG_PARAMS,
  changes: CHANGES_PARAMS,
  prices: PRICES_PARAMS,
  'prices-all': PRICES_PARAMS,
  openapi: [],
};
const LIST_SET: ReadonlySet<string> = new Set(LIST_PARAMS);

/**
 * Parse a request path and query. Every parameter must be one of the operation's: a misspelled one (developr,
 * pagesize) ignored would answer unfiltered data, and a wrong integration would look right; cache-busters are refused
 * with it (they defeat the caching this API asks of clients: docs/api.md). A known scalar parameter given twice, or
 * any in the bracketed array form (include[], include[0]), is rejected too: first-wins or ignoring it would hide a
 * client bug. A list-valued one given repeatedly is read as its comma list.
 */
export function parseRequest(pathname: string, params: URLSearchParams): ParseResult {
  const kind = routeOf(pathname);
  let slug = '';
  if (kind === null) return { ok: false, status: 404, reason: 'no such path' };
  // Pages and text files: a query is ignored.
  if (kind === 'docs' || kind === 'docs-script' || kind === 'llms') return { ok: true, request: { kind } };
  if (kind === 'detail' || kind === 'prices') {
    slug = pathname.slice(API_PREFIX.length + 1, kind === 'prices' ? -PRICES_SEGMENT.length : undefined);
    // Encoded bytes, dots, slashes, backslashes and NUL all fail the slug pattern: never a path to the disk.
    if (slug.length > MAX_SLUG_LENGTH || !SLUG_RE.test(slug))
      return { ok: false, status: 404, reason: 'no such model' };
  }

  const allowed: ReadonlySet<string> = new Set(PARAMS[kind]);
  const invalid: InvalidParam[] = [];
  const values = new Map<string, string>();
  const unknown = new Set<string>();
  for (const [name, value] of params) {
    if (!allowed.has(name)) {
      if (unknown.has(name)) continue; // named once
      unknown.add(name);
      // include[]=a&include[]=b (axios) or include[0]=a&include[1]=b (qs's default) is a list meant for a known
      // parameter: the reason shows the form that works. Named once per parameter.
      const base = /^(.+)\[\d*\]$/.exec(name)?.[1] ?? '';
      if (allowed.has(base)) {
        if (!invalid.some((p) => p.name.startsWith(`${base}[`)))
          invalid.push({ name, reason: `not a parameter; ${sendOnce(base)}` });
      } else invalid.push({ name: name.slice(0, 40), reason: notAParameter(kind, name) });
      continue;
    }
    // A list given as repeated keys (openapi-fetch's default, URLSearchParams.append, Python requests) is its comma
    // list: the same canonical request, so the same answer and ETag. Empty pieces add nothing, as `include=` alone.
    const had = values.get(name);
    if (had === undefined) values.set(name, value);
    else if (isListValued(name)) values.set(name, had === '' ? value : value === '' ? had : `${had},${value}`);
    else invalid.push({ name, reason: `given more than once; ${sendOnce(name, 'it')}` });
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
  if (kind !== 'list') {
    if (invalid.length) return { ok: false, status: 400, invalid };
    if (kind === 'detail') return { ok: true, request: { kind, slug, locale, lane, displayOnly, include } };
    if (kind === 'catalog') return { ok: true, request: { kind, locale, lane, displayOnly } };
    if (kind === 'changes') return parseChanges(values.get('since'));
    if (kind === 'prices' || kind === 'prices-all') return parsePrices(kind, slug, values.get('at'));
    return { ok: true, request: kind === 'metrics' ? { kind, locale } : { kind } };
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
    else if (hasControl(trimmed)) invalid.push({ name: 'q', reason: 'holds control characters or invalid UTF-8' });
    else if (trimmed) q = trimmed;
  }
  const filter = parseFilter(values, invalid);
  if (invalid.length) return { ok: false, status: 400, invalid };
  return { ok: true, request: { kind, locale, lane, displayOnly, include, sort, page, pageSize, q, filter } };
}

/** `at` of the price routes: a real calendar day, YYYY-MM-DD; required on GET /api/v1/prices. */
function parsePrices(kind: 'prices' | 'prices-all', slug: string, at: string | undefined): ParseResult {
  if (at === undefined && kind === 'prices') return { ok: true, request: { kind, slug, at: null } };
  if (at === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(at) || !realMonthOrDay(at))
    return {
      ok: false,
      status: 400,
      invalid: [
        {
          name: 'at',
          reason: at === undefined ? 'required: a date, YYYY-MM-DD (UTC)' : 'must be a calendar date, YYYY-MM-DD (UTC)',
        },
      ],
    };
  return { ok: true, request: kind === 'prices' ? { kind, slug, at } : { kind, at } };
}

function parseChanges(since: string | undefined): ParseResult {
  if (since === undefined) return { ok: true, request: { kind: 'changes', since: null } };
  if (!RevisionId.safeParse(since).success)
    return {
      ok: false,
      status: 400,
      invalid: [
        { name: 'since', reason: 'must be a publication revision, as sent in the X-Publication-Revision header' },
      ],
    };
  return { ok: true, request: { kind: 'changes', since } };
}

/** Why a parameter the operation does not have is refused, and what it does have. */
function notAParameter(kind: keyof typeof PARAMS, name: string): string {
  const own = PARAMS[kind];
  const accepted = own.length ? `accepted: ${own.join(', ')}` : 'it takes none';
  if (kind !== 'list' && LIST_SET.has(name)) {
    const where =
      kind === 'detail' ? "a model's detail" : `GET ${kind === 'openapi' ? OPENAPI_PATH : `/api/v1/${kind}`}`;
    return `a parameter of the list (GET /api/v1/models), not of ${where}; ${accepted}`;
  }
  const folded = fold(name);
  const near = own.find((p) => folded.length >= 4 && editDistance(fold(p), folded) <= 2);
  return `not a parameter of this operation${near ? ` (did you mean ${near}?)` : ''}; ${accepted}`;
}

const fold = (name: string) => name.toLowerCase().replace(/[_-]/g, '');

/** Levenshtein distance, for the "did you mean" hint (names are short: a plain table is enough). */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || b.length > 64) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

const hasControl = (s: string) => /[\u0000-\u001f\u007f-\u009f\ufffd]/.test(s);

/** A comma list (`a,b`): its parts, or null after naming the first bad part. Empty (`name=`) is no filter. */
function commaList(
  values: Map<string, string>,
  name: string,
  invalid: InvalidParam[],
  check: (part: string) => string | null,
): string[] {
  const v = values.get(name);
  if (v === undefined || v === '') return [];
  const parts = v.split(',');
  for (const part of parts) {
    const why = part === '' ? 'an empty item (two commas, or one at an end)' : check(part);
    if (why !== null) {
      invalid.push({ name, reason: why });
      return [];
    }
  }
  return parts;
}

const inVocabulary =
  (vocabulary: readonly string[], what: string) =>
  (part: string): string | null =>
    vocabulary.includes(part)
      ? null
      : `${JSON.stringify(part.slice(0, 40))} is not ${what}; one of ${vocabulary.join(', ')}`;

/**
 * The filter parameters, checked as far as the request alone tells: capability keys, modalities and statuses are a
 * fixed vocabulary; whether a developer or a provider exists depends on the publication (gateway/compose.ts).
 */
function parseFilter(values: Map<string, string>, invalid: InvalidParam[]): ListFilter | null {
  const capabilities = new Set(
    commaList(values, 'capabilities', invalid, inVocabulary(CAPABILITY_KEYS, 'a capability key')),
  );
  for (const side of ['input', 'output'] as const) {
    for (const m of commaList(values, `${side}_modalities`, invalid, inVocabulary(CAPABILITY_MODALITIES, 'a modality')))
      capabilities.add(`${side}:${m}`);
  }
  const developer = new Set(
    commaList(values, 'developer', invalid, (part) =>
      part.length > MAX_DEVELOPER_LENGTH
        ? `a name longer than ${MAX_DEVELOPER_LENGTH} characters`
        : hasControl(part)
          ? 'holds control characters or invalid UTF-8'
          : null,
    ),
  );
  // An empty value (`min_context_window=`) is no filter, as for the comma lists (docs/api.md).
  const given = (name: string) => {
    const v = values.get(name);
    return v === '' ? undefined : v;
  };
  const minTokens = (name: string) =>
    given(name) !== undefined ? parseInteger(given(name), name, 0, MAX_TOKENS, 0, invalid) : null;
  const min_context_window = minTokens('min_context_window');
  const min_output_tokens = minTokens('min_output_tokens');
  let max_blended_price: number | null = null;
  const price = given('max_blended_price');
  if (price !== undefined) {
    if (/^\d{1,7}(\.\d{1,6})?$/.test(price)) max_blended_price = Number(price);
    else
      invalid.push({
        name: 'max_blended_price',
        reason: `must be a price in USD per million tokens, a decimal number from 0 to ${MAX_PRICE} (e.g. 2.5)`,
      });
  }
  let open_weights: boolean | null = null;
  const ow = given('open_weights');
  if (ow !== undefined) {
    if (ow === 'true' || ow === 'false') open_weights = ow === 'true';
    else invalid.push({ name: 'open_weights', reason: 'must be true or false' });
  }
  const provider = new Set(
    commaList(values, 'provider', invalid, (part) =>
      part.length <= MAX_PROVIDER_LENGTH && ProviderId.safeParse(part).success
        ? null
        : `${JSON.stringify(part.slice(0, 40))} is not a provider id ` +
          `(lowercase letters, digits, ".", "_" and "-", as in an offer's provider)`,
    ),
  );
  const status = new Set(commaList(values, 'status', invalid, inVocabulary(LIFECYCLE_STATUSES, 'a lifecycle status')));
  let exclude_snapshots = false;
  const ex = given('exclude_snapshots');
  if (ex !== undefined) {
    if (ex === 'true' || ex === 'false') exclude_snapshots = ex === 'true';
    else invalid.push({ name: 'exclude_snapshots', reason: 'must be true or false' });
  }
  const filter: ListFilter = {
    capabilities: [...capabilities].sort(),
    developer: [...developer].sort(),
    min_context_window,
    min_output_tokens,
    max_blended_price,
    open_weights,
    provider: [...provider].sort(),
    status: LIFECYCLE_STATUSES.filter((s) => status.has(s)),
    exclude_snapshots,
  };
  const none =
    !filter.capabilities.length &&
    !filter.developer.length &&
    min_context_window === null &&
    min_output_tokens === null &&
    max_blended_price === null &&
    open_weights === null &&
    !filter.provider.length &&
    !filter.status.length &&
    !exclude_snapshots;
  return none ? null : filter;
}

/** A filter as one string: part of a composed answer's cache key and validator. */
export const filterKey = (f: ListFilter): string => JSON.stringify(f);

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
