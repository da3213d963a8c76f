// The MCP tools' arguments and structured results (POST /mcp, gateway/mcp.ts). Arguments are the REST parameters by
// their names and schemas (requests.ts QUERY_PARAMETERS), list-valued ones as JSON arrays; results are the REST
// answers' data (or rows made from a detail's), so what tools/list shows follows from the OpenAPI document's schemas.
import { z } from 'zod';
import { LIST_PARAMS, MAX_SLUG_LENGTH, QUERY_PARAMETERS, type QueryParameter } from './requests.js';
import {
  BenchmarkEntry,
  CapabilityKey,
  ChangesResponse,
  Lifecycle,
  ListResponse,
  MetricsResponse,
  ModelDetail,
  PricingDetail,
} from './api.js';
import { ModelPricesResponse } from './history.js';
import { Slug as SlugPattern } from './primitives.js';

/** search_models pages are short: an agent reads every item it is sent. */
export const MCP_MAX_PAGE_SIZE = 20;
export const MCP_DEFAULT_PAGE_SIZE = 10;
export const MAX_COMPARED = 10;

const Slug = SlugPattern.max(MAX_SLUG_LENGTH).describe(
  'A model slug, as in the slug field of a search result (gpt-4o).',
);
/** A REST query parameter as a tool argument: its own schema and description, optional (REST's default applies). */
const arg = (name: QueryParameter) => QUERY_PARAMETERS[name].optional();
/** Display-only overrides are for a site that shows them; an agent reads the public variant. */
const SEARCH_PARAMS = LIST_PARAMS.filter((p) => p !== 'includeDisplayOnly');

/** The list's parameters by their names, each as REST defines it (a new filter becomes an argument with it). */
export const SearchModelsInput = z.strictObject({
  ...Object.fromEntries(SEARCH_PARAMS.map((name) => [name, arg(name)])),
  page_size: z
    .int()
    .min(1)
    .max(MCP_MAX_PAGE_SIZE)
    .optional()
    .describe(`Models per page, at most ${MCP_MAX_PAGE_SIZE} (default ${MCP_DEFAULT_PAGE_SIZE}).`),
});
export const SearchModelsOutput = ListResponse.shape.data;

export const GetModelInput = z.strictObject({
  slug: Slug,
  include: arg('include'),
  locale: arg('locale'),
  lane: arg('lane'),
});
export const GetModelOutput = z.strictObject({ model: ModelDetail });

export const CompareModelsInput = z.strictObject({
  slugs: z.array(Slug).min(2).max(MAX_COMPARED).describe(`The models to compare, 2 to ${MAX_COMPARED} slugs.`),
  lane: arg('lane'),
});
const price = PricingDetail.shape.input_price_per_million.nullable();
/** One model in a comparison: what a choice between models turns on, from its detail with capabilities and pricing. */
export const ComparisonRow = z.strictObject({
  ...ModelDetail.pick({
    slug: true,
    name: true,
    developer: true,
    release_date: true,
    context_window_tokens: true,
    max_output_tokens: true,
  }).shape,
  input_price_per_million: price.describe('USD per million input tokens; null: no price.'),
  output_price_per_million: price.describe('USD per million output tokens; null: no price.'),
  blended_price_per_million: price.describe('(3 x input + output) / 4; null: no price.'),
  cache_read_price_per_million: price.describe("The headline offer's cache read price; null: not stated."),
  cache_write_price_per_million: price.describe("The headline offer's cache write price; null: not stated."),
  status: Lifecycle.shape.status,
  capabilities: z.array(CapabilityKey).describe('The capability keys the model has (search_models capabilities).'),
  benchmarks: z
    .array(
      BenchmarkEntry.pick({ metric_key: true, label: true, value: true, unit: true, rank: true, ranked_count: true }),
    )
    .describe("The model's headline benchmark values (benchmark_summary)."),
});
export const CompareModelsOutput = z.strictObject({ models: z.array(ComparisonRow) });

export const GetPricesInput = z.strictObject({ slug: Slug, at: arg('at') });
/** GET /api/v1/models/{slug}/prices: every offer's dated price rows (with at, those in force that day). */
export const GetPricesOutput = ModelPricesResponse.shape.data;

export const ListMetricsInput = z.strictObject({});
export const ListMetricsOutput = MetricsResponse.shape.data;

export const ListChangesInput = z.strictObject({ since: arg('since') });
export const ListChangesOutput = ChangesResponse.shape.data;

export interface ToolSchemas {
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
}

/** The tools, by name, as tools/list shows them. */
export const MCP_TOOLS = {
  search_models: {
    description:
      'Search and filter the model catalog (free text, capabilities, developer, context window, price, open weights); ' +
      "one page of models with pagination, as GET /api/v1/models answers. Its arguments are that operation's " +
      'parameters; list-valued ones (capabilities, developer, include, ...) are JSON arrays.',
    input: SearchModelsInput,
    output: SearchModelsOutput,
  },
  get_model: {
    description:
      "One model's detail: limits, speed, headline benchmarks, provenance; include adds every benchmark, capabilities " +
      'and the price card. As GET /api/v1/models/{slug} answers.',
    input: GetModelInput,
    output: GetModelOutput,
  },
  compare_models: {
    description:
      'Compare 2 to 10 models side by side: prices, context and output limits, capability keys and headline benchmark ' +
      'values, one row per model.',
    input: CompareModelsInput,
    output: CompareModelsOutput,
  },
  get_prices: {
    description:
      "A model's dated prices at each provider (USD per million tokens), as GET /api/v1/models/{slug}/prices " +
      'answers; at (YYYY-MM-DD) keeps the rows in force that day.',
    input: GetPricesInput,
    output: GetPricesOutput,
  },
  list_metrics: {
    description: 'Every benchmark metric models are ranked by, with its unit, direction and how many models it ranks.',
    input: ListMetricsInput,
    output: ListMetricsOutput,
  },
  list_changes: {
    description: 'What changed in the catalog in recent publications, newest first; since narrows it to later ones.',
    input: ListChangesInput,
    output: ListChangesOutput,
  },
} as const satisfies Record<string, ToolSchemas>;
export type McpToolName = keyof typeof MCP_TOOLS;
