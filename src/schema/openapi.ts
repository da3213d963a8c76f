// The OpenAPI 3.1 document of the API (GET /api/v1/openapi.json), generated from the zod response schemas, the
// request parser's parameter lists and the gateway's problem table, so it cannot drift from what is served. One
// self-contained document: every schema under components (JSON Schema 2020-12, which OpenAPI 3.1 takes as is), every
// path written in full. The build writes it into each publication with real examples from that publication.
import { z } from 'zod';
import {
  CATALOG_PARAMS,
  CATALOG_PATH,
  CHANGES_PARAMS,
  CHANGES_PATH,
  PRICES_PARAMS,
  PRICES_PATH,
  DETAIL_PARAMS,
  DOCS_PATH,
  LIST_PARAMS,
  MAX_SLUG_LENGTH,
  METRICS_PARAMS,
  METRICS_PATH,
  OPENAPI_PATH,
  parseRequest,
  QUERY_PARAMETERS,
  type InvalidParam,
  type QueryParameter,
} from './requests.js';
import {
  Attribution,
  BenchmarkEntry,
  BenchmarkGroup,
  Capabilities,
  CapabilityKey,
  CatalogModel,
  CatalogResponse,
  CategoryPerformance,
  ChangesResponse,
  DetailResponse,
  FieldChange,
  Lifecycle,
  ListItem,
  ListResponse,
  MetricInfo,
  MetricsResponse,
  ModelChange,
  ModelDetail,
  NearbyModel,
  Pagination,
  Offer,
  PerformanceSummary,
  PricingCard,
  PricingDetail,
  PricingSummary,
  Problem,
  PublicationChanges,
  PublicProvenance,
  Stats,
} from './api.js';
import { SLUG_RE } from './primitives.js';
import { HeadlinePriceRow, ModelPricesResponse, OfferHistory, PriceRow, PricesAtResponse } from './history.js';
import { PROBLEM_CONTENT_TYPE, PROBLEMS, problemBody, type ProblemCode } from './problems.js';
import { PriceMode, PriceTier } from './source.js';

/** Real bodies of each response, as the build has them: the document shows them as examples (none without). */
export interface OpenApiExamples {
  list?: unknown;
  detail?: unknown;
  metrics?: unknown;
  catalog?: unknown;
}

export interface OpenApiOptions {
  /** The publication's name (site.yaml), for the title. */
  name: string;
  /** The response schema version (site.yaml), the document's info.version. */
  schemaVersion: string;
  /** Every developer of the publication (lane all): the developer filter's allowed values. */
  developers: readonly string[];
  /** Every provider with an offer in the publication (lane all): the provider filter's allowed values. */
  providers: readonly string[];
  examples: OpenApiExamples;
}

type Json = Record<string, unknown>;

/** Schemas published under components, by name: the responses and every building block clients name in code. */
const COMPONENTS: Record<string, z.ZodType> = {
  ModelPricesResponse,
  PricesAtResponse,
  PriceRow,
  OfferHistory,
  HeadlinePriceRow,
  ListResponse,
  DetailResponse,
  MetricsResponse,
  CatalogResponse,
  ChangesResponse,
  Problem,
  Attribution,
  Pagination,
  ListItem,
  ModelDetail,
  CatalogModel,
  Stats,
  PerformanceSummary,
  BenchmarkEntry,
  NearbyModel,
  BenchmarkGroup,
  CategoryPerformance,
  PricingSummary,
  PricingCard,
  PricingDetail,
  Offer,
  PriceTier,
  PriceMode,
  Lifecycle,
  Capabilities,
  CapabilityKey,
  PublicProvenance,
  MetricInfo,
  PublicationChanges,
  ModelChange,
  FieldChange,
};

/** The component schemas, referring to each other as #/components/schemas/<name>. */
export function componentSchemas(): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'output',
    unrepresentable: 'throw',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  const out: Record<string, Json> = {};
  for (const [name, { $schema: _dialect, $id: _id, ...schema }] of Object.entries(schemas)) out[name] = schema;
  // The stable machine-readable codes, as the gateway sends them.
  const problem = out.Problem as { properties: Record<string, Json> };
  problem.properties.code = { type: 'string', enum: Object.keys(PROBLEMS) };
  return out;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const HEADERS: Record<string, Json> = {
  ETag: {
    description:
      'Strong validator of the body: send it back in If-None-Match to get a 304 when nothing changed (the ' +
      '304 counts against the quota, and sends no body).',
    required: true,
    schema: { type: 'string', pattern: '^"[0-9a-f]{32}"$' },
  },
  'Last-Modified': {
    description: 'When this body last changed (an HTTP date); usable in If-Modified-Since.',
    required: true,
    schema: { type: 'string' },
  },
  'Cache-Control': {
    description:
      'private, max-age=300 on keyed answers (browsers and apps may reuse them for five minutes, shared ' +
      'caches must not); public, max-age=300 on the OpenAPI document; no-store on errors.',
    schema: { type: 'string' },
  },
  Vary: {
    description: 'x-api-key: a cached answer serves only requests with the same key.',
    schema: { type: 'string' },
  },
  'X-Publication-Revision': {
    description: 'The live publication (the body says which revision last changed it).',
    required: true,
    schema: { type: 'string' },
  },
  'X-Schema-Version': { description: 'The response schema version.', required: true, schema: { type: 'string' } },
  RateLimit: {
    description:
      'IETF RateLimit field: requests left today (r) and seconds until the quota resets at 00:00 UTC (t), e.g. "daily";r=998;t=3600.',
    required: true,
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description:
      'IETF RateLimit-Policy field: the daily quota (q) and its window in seconds (w), e.g. "daily";q=1000;w=86400.',
    required: true,
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Seconds until the quota resets (the next 00:00 UTC).',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'Content-Encoding': {
    description: 'Present only when the body is sent compressed, as the request allowed with Accept-Encoding.',
    schema: { type: 'string' },
  },
  Allow: { description: 'The methods this API answers.', required: true, schema: { type: 'string' } },
};
const headerRefs = (names: string[]) =>
  Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
const KEYED = [
  'ETag',
  'Last-Modified',
  'Cache-Control',
  'Vary',
  'X-Publication-Revision',
  'X-Schema-Version',
  'RateLimit',
  'RateLimit-Policy',
];

/** Examples of the parameters that get one (lists as the comma list they are sent as). */
const PARAMETER_EXAMPLES: Partial<Record<QueryParameter, string | number>> = {
  include: 'benchmarks,pricing',
  q: 'claude',
  capabilities: 'input:image,tool_use',
  input_modalities: 'text,image',
  output_modalities: 'text',
  min_context_window: 128000,
  max_blended_price: 2.5,
  since: 'r1a2b3c4d5e6f',
  at: '2025-09-01',
};

/**
 * Every query parameter as a component, from its zod schema and description (requests.ts QUERY_PARAMETERS). A list
 * is one comma-separated value (form, not exploded); the developer and provider filters' values are this
 * publication's own.
 */
function parameters(developers: readonly string[], providers: readonly string[]): Record<string, Json> {
  const known: Partial<Record<QueryParameter, { values: readonly string[]; example: string }>> = {
    developer: { values: developers, example: 'OpenAI,Anthropic' },
    provider: { values: providers, example: 'groq,amazon-bedrock' },
  };
  const out: Record<string, Json> = {};
  for (const [name, zod] of Object.entries(QUERY_PARAMETERS) as [QueryParameter, z.ZodType][]) {
    const {
      $schema: _dialect,
      description,
      ...schema
    } = z.toJSONSchema(zod, {
      target: 'draft-2020-12',
      io: 'input',
      unrepresentable: 'throw',
    }) as Json;
    const example = PARAMETER_EXAMPLES[name];
    const parameter: Json = { name, in: 'query', description, schema };
    if (schema.type === 'array') {
      const names = known[name];
      const items =
        name === 'capabilities'
          ? ref('CapabilityKey')
          : names?.values.length
            ? { type: 'string', enum: [...names.values] }
            : (schema.items as Json);
      Object.assign(parameter, { style: 'form', explode: false, schema: { ...schema, items, uniqueItems: true } });
      const listed = names ? (names.values.length ? names.values.slice(0, 2).join(',') : names.example) : example;
      if (listed !== undefined) parameter.example = String(listed).split(',');
    } else if (example !== undefined) parameter.example = example;
    out[name] = parameter;
  }
  return out;
}

/** A real problem body for each code (what the gateway sends), with the invalid parameters of real requests. */
function problemExample(code: ProblemCode, invalid?: InvalidParam[]): Json {
  return { value: JSON.parse(problemBody(code, invalid ? { invalid } : {})), summary: PROBLEMS[code].title };
}
const invalidOf = (path: string, query: string): InvalidParam[] => {
  const r = parseRequest(path, new URLSearchParams(query));
  if (r.ok || r.status !== 400) throw new Error(`openapi: ${path}?${query} is not a 400`);
  return r.invalid;
};

/** Error responses by status, each with an example body per code. */
function errorResponses(developers: readonly string[]): Record<string, Json> {
  const problems = (description: string, examples: Record<string, Json>, headers: string[] = []): Json => ({
    description,
    ...(headers.length ? { headers: headerRefs(headers) } : {}),
    content: { [PROBLEM_CONTENT_TYPE]: { schema: ref('Problem'), examples } },
  });
  const unknownDeveloper: InvalidParam = {
    name: 'developer',
    reason: `"openai" is not a developer in this publication (names match exactly, case included); one of ${developers.join(', ')}`,
  };
  return {
    BadRequest: problems(
      'A parameter the operation does not have, a value outside its range or list, a parameter given twice ' +
        '(invalid_parameter), or a request that cannot be parsed (bad_request). Not counted against the ' +
        'quota.',
      {
        unknown_parameter: problemExample('invalid_parameter', invalidOf('/api/v1/models', 'developr=OpenAI')),
        unknown_capability: problemExample(
          'invalid_parameter',
          invalidOf('/api/v1/models', 'capabilities=input:telepathy'),
        ),
        unknown_developer: problemExample('invalid_parameter', [unknownDeveloper]),
        page_size: problemExample('invalid_parameter', invalidOf('/api/v1/models', 'page_size=500')),
        bad_request: problemExample('bad_request'),
      },
    ),
    Unauthorized: problems('No x-api-key header (missing_api_key), or an unknown or revoked key (invalid_api_key).', {
      // Example names, not codes: none is named like a key (the privacy checks look for such names).
      no_key: problemExample('missing_api_key'),
      unknown_key: problemExample('invalid_api_key'),
    }),
    NotFound: problems(
      'An unknown path, a slug that is not canonical, or no such model in the requested lane (the detail ' +
        'says which). Only a well-formed slug counts against the quota.',
      { not_found: problemExample('not_found') },
    ),
    MethodNotAllowed: problems(
      'Anything but GET, HEAD and OPTIONS.',
      { method_not_allowed: problemExample('method_not_allowed') },
      ['Allow'],
    ),
    RequestTimeout: problems('The request did not arrive in full within 30 s.', {
      request_timeout: problemExample('request_timeout'),
    }),
    Gone: problems(
      'resync_required: since names a revision the feed does not keep (or none it knows). Fetch the catalog ' +
        'again, then follow the feed from the revision it was served with. Counts against the quota.',
      { resync_required: problemExample('resync_required') },
    ),
    UriTooLong: problems('A request target over 4096 bytes.', { uri_too_long: problemExample('uri_too_long') }),
    TooManyRequests: problems(
      "The key's daily quota is spent; it resets at 00:00 UTC (Retry-After).",
      { quota_exceeded: problemExample('quota_exceeded') },
      ['Retry-After', 'RateLimit', 'RateLimit-Policy'],
    ),
    HeadersTooLarge: problems('A request line and headers over 16 KiB.', {
      headers_too_large: problemExample('headers_too_large'),
    }),
    Unavailable: problems(
      'The publication or the key and quota store could not be read in time (unavailable), or too many ' +
        'pipelined requests wait on one connection (too_many_pipelined). Not counted; retry shortly.',
      { unavailable: problemExample('unavailable'), too_many_pipelined: problemExample('too_many_pipelined') },
    ),
    NotModified: {
      description: 'If-None-Match (or If-Modified-Since) matched: no body. Counts against the quota.',
      headers: headerRefs(KEYED.filter((h) => h !== 'Cache-Control')),
    },
  };
}

const responseRefs = (names: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(names).map(([status, name]) => [status, { $ref: `#/components/responses/${name}` }]),
  );
const KEYED_ERRORS = {
  '304': 'NotModified',
  '400': 'BadRequest',
  '401': 'Unauthorized',
  '405': 'MethodNotAllowed',
  '408': 'RequestTimeout',
  '414': 'UriTooLong',
  '429': 'TooManyRequests',
  '431': 'HeadersTooLarge',
  '503': 'Unavailable',
};

/** A 200 answer; `example` shown when the build had one. */
const ok = (description: string, schema: string, name: string, summary: string, example: unknown): Json => ({
  description,
  headers: headerRefs([...KEYED, 'Content-Encoding']),
  content: {
    'application/json': {
      schema: ref(schema),
      ...(example === undefined ? {} : { examples: { [name]: { summary, value: example } } }),
    },
  },
});
const paramRefs = (names: readonly string[]) => names.map((n) => ({ $ref: `#/components/parameters/${n}` }));

/** The whole document. */
export function openApiDocument(o: OpenApiOptions): Json {
  const variantParams = paramRefs(DETAIL_PARAMS);
  return {
    openapi: '3.1.0',
    info: {
      title: `${o.name} API`,
      version: o.schemaVersion,
      summary: 'A read-only catalog of AI models: speed, prices, benchmark ranks and capabilities.',
      description: [
        'Every request needs an API key in the x-api-key header. Each key has a daily quota (1000 requests ' +
          'per UTC day on the free tier; RateLimit-Policy states it): every admitted request counts, 304 ' +
          'included; 400, 401 and 429 do not.',
        'Answers carry a strong ETag and Last-Modified: revalidate with If-None-Match instead of fetching ' +
          'again, and reuse an answer for five minutes (Cache-Control). Unknown parameters (cache-busters too) ' +
          'are refused with 400.',
        'To sync the whole catalog, read GET /api/v1/catalog: one request per locale, lane and display ' +
          'variant holds every model with every include.',
        `Every display of this data must carry the backlink in the attribution object of each answer; each model's ` +
          `provenance names its sources and their licences. A human reference of this document is at ${DOCS_PATH}.`,
      ].join('\n\n'),
      // The software's and this description's; the data's are its sources' (each detail's provenance names them).
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'The gateway that serves this document' }],
    security: [{ keyHeader: [] }],
    tags: [
      { name: 'models', description: 'The catalog: lists, search, filters and model details.' },
      { name: 'leaderboards', description: 'The metrics the publication ranks models by.' },
      { name: 'export', description: 'The whole catalog in one answer, for syncing.' },
      { name: 'changes', description: 'What each recent publication changed, per model and field, for syncing.' },
      { name: 'meta', description: 'This description of the API.' },
    ],
    paths: {
      '/api/v1/models': {
        get: {
          operationId: 'listModels',
          tags: ['models'],
          summary: 'List, search and filter models',
          description:
            'One page of models in the requested order. With q, filters, or a page size other than the prebuilt ' +
            'ones, the page is composed by the gateway; the answer has the same form. Filters combine (all must ' +
            'hold).',
          parameters: paramRefs(LIST_PARAMS),
          responses: {
            '200': ok(
              'One page of models.',
              'ListResponse',
              'first_page',
              'The first page of the default list at page_size=2',
              o.examples.list,
            ),
            ...responseRefs(KEYED_ERRORS),
          },
        },
      },
      '/api/v1/models/{slug}': {
        get: {
          operationId: 'getModel',
          tags: ['models'],
          summary: 'One model',
          parameters: [
            {
              name: 'slug',
              in: 'path',
              required: true,
              description: 'The model slug, as in the list: lower-case letters, digits and single hyphens.',
              schema: { type: 'string', pattern: SLUG_RE.source, maxLength: MAX_SLUG_LENGTH },
              example: 'gpt-4o',
            },
            ...variantParams,
          ],
          responses: {
            '200': ok('The model detail.', 'DetailResponse', 'detail', 'A model detail', o.examples.detail),
            '404': { $ref: '#/components/responses/NotFound' },
            ...responseRefs(KEYED_ERRORS),
          },
        },
      },
      '/api/v1/models/{slug}/prices': {
        get: {
          operationId: 'getModelPrices',
          tags: ['models'],
          summary: "A model's prices over time",
          description:
            "Each offer's dated prices, oldest first, per source: models-dev rows are dated by when the change reached " +
            "models.dev's repository (precision commit_date), genai-prices rows by the vendor's announced date " +
            '(precision announced). With at, only the rows in force that day, at most one per source; offers with ' +
            'none that day are left out.',
          parameters: [
            {
              name: 'slug',
              in: 'path',
              required: true,
              description: 'The model slug.',
              schema: { type: 'string', pattern: SLUG_RE.source, maxLength: MAX_SLUG_LENGTH },
              example: 'deepseek-chat',
            },
            ...paramRefs(PRICES_PARAMS),
          ],
          responses: {
            '200': ok('The dated prices.', 'ModelPricesResponse', 'prices', 'Dated prices', undefined),
            '404': { $ref: '#/components/responses/NotFound' },
            ...responseRefs(KEYED_ERRORS),
          },
        },
      },
      [PRICES_PATH]: {
        get: {
          operationId: 'getPricesAt',
          tags: ['models'],
          summary: "Every model's price on a day",
          description:
            "Each model once, with its headline offer's row in force that day (an announced date preferred over a " +
            'commit date); a model whose headline offer had none is left out. One request of the quota, for ' +
            'repricing a month of logs.',
          parameters: [
            {
              name: 'at',
              in: 'query',
              required: true,
              description: 'A day, YYYY-MM-DD (UTC).',
              schema: { type: 'string', format: 'date' },
              example: '2025-09-01',
            },
          ],
          responses: {
            '200': ok('The prices of that day.', 'PricesAtResponse', 'prices_at', 'Prices of a day', undefined),
            ...responseRefs(KEYED_ERRORS),
          },
        },
      },
      [METRICS_PATH]: {
        get: {
          operationId: 'listMetrics',
          tags: ['leaderboards'],
          summary: 'Every metric models are ranked by',
          description:
            'Each metric with its label, group, unit and direction, and how many models it ranks in each lane: ' +
            'the columns of a comparison table, the choices of a leaderboard selector.',
          parameters: paramRefs(METRICS_PARAMS),
          responses: {
            '200': ok('Every metric.', 'MetricsResponse', 'metrics', 'The metrics (cut to three)', o.examples.metrics),
            ...responseRefs(KEYED_ERRORS),
          },
        },
      },
      [CATALOG_PATH]: {
        get: {
          operationId: 'getCatalog',
          tags: ['export'],
          summary: 'Every model of a lane, with every include',
          description:
            'data.models holds every model of the lane, by slug, each equal to the data of its detail with ' +
            'include=benchmarks,capabilities,pricing. One request, and one ETag to revalidate: the way to sync ' +
            'the catalog.',
          parameters: paramRefs(CATALOG_PARAMS),
          responses: {
            '200': ok(
              'The whole catalog of the lane.',
              'CatalogResponse',
              'catalog',
              'The catalog (cut to its first model; total counts them all)',
              o.examples.catalog,
            ),
            ...responseRefs(KEYED_ERRORS),
          },
        },
      },
      [CHANGES_PATH]: {
        get: {
          operationId: 'listChanges',
          tags: ['changes'],
          summary: 'What changed in recent publications',
          description:
            'The semantic changes of the last 30 publications, newest first: models added, removed or changed, ' +
            'with each changed field before and after. To stay in sync, read the catalog once, then ask for the ' +
            'changes since the X-Publication-Revision it was served with (docs/changes.md).',
          parameters: paramRefs(CHANGES_PARAMS),
          responses: {
            // No example: the document is made before the build knows what its feed holds.
            '200': ok('The publications after since (all kept, without it).', 'ChangesResponse', '', '', undefined),
            '410': { $ref: '#/components/responses/Gone' },
            ...responseRefs(KEYED_ERRORS),
          },
        },
      },
      [OPENAPI_PATH]: {
        get: {
          operationId: 'getOpenApi',
          tags: ['meta'],
          summary: 'This document',
          description: 'Needs no key and does not count against any quota.',
          security: [],
          responses: {
            '200': {
              description: 'The OpenAPI 3.1 document.',
              headers: headerRefs([
                'ETag',
                'Last-Modified',
                'Cache-Control',
                'X-Publication-Revision',
                'X-Schema-Version',
                'Content-Encoding',
              ]),
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['openapi', 'info', 'paths'],
                    properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } },
                  },
                  examples: {
                    document: {
                      summary: 'The start of this document',
                      value: {
                        openapi: '3.1.0',
                        info: { title: `${o.name} API`, version: o.schemaVersion },
                        paths: {},
                      },
                    },
                  },
                },
              },
            },
            '304': {
              description: 'If-None-Match matched: no body.',
              headers: headerRefs(['ETag', 'Last-Modified']),
            },
            ...responseRefs({ '400': 'BadRequest', '405': 'MethodNotAllowed', '503': 'Unavailable' }),
          },
        },
      },
    },
    components: {
      schemas: componentSchemas(),
      parameters: parameters(o.developers, o.providers),
      headers: HEADERS,
      responses: errorResponses(o.developers),
      securitySchemes: {
        keyHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'A key as issued (modelpub keys create); never expires, limited per UTC day.',
        },
      },
    },
  };
}
