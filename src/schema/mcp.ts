// The MCP tools' arguments and structured results (POST /mcp, gateway/mcp.ts). Arguments are the REST parameters by
// their names, list-valued ones as JSON arrays; results are the REST answers' data (or rows made from a detail's),
// so the JSON Schemas a client sees in tools/list follow from the same zod schemas as the OpenAPI document.
import { z } from 'zod';
import { MAX_QUERY_LENGTH, MAX_SLUG_LENGTH } from './requests.js';
import {
  BenchmarkEntry,
  CapabilityKey,
  ChangesResponse,
  Include,
  ListResponse,
  MetricsResponse,
  ModelDetail,
  PricingDetail,
  QueryLane,
  Sort,
} from './api.js';
import { RevisionId, Slug as SlugPattern } from './primitives.js';
import { Locale, Modality } from './source.js';

/** search_models pages are short: an agent reads every item it is sent. */
export const MCP_MAX_PAGE_SIZE = 20;
export const MCP_DEFAULT_PAGE_SIZE = 10;
export const MAX_COMPARED = 10;

const Slug = SlugPattern.max(MAX_SLUG_LENGTH).describe(
  'A model slug, as in the slug field of a search result (gpt-4o).',
);
const Includes = z
  .array(Include)
  .describe('Sections to add: benchmarks (every metric with its rank), capabilities, pricing (the price card).');
const LocaleArg = Locale.describe('Language of the descriptions (default en).');
const LaneArg = QueryLane.describe(
  'verified (default): verified records only; provisional: models with provisional records; all: every public model.',
);
const Tokens = z.number().int().min(0).max(999_999_999);

export const SearchModelsInput = z.strictObject({
  q: z
    .string()
    .max(MAX_QUERY_LENGTH)
    .optional()
    .describe(
      'Free text: matches names and slugs from the start of a word (gpt4o finds gpt-4o), or every word anywhere.',
    ),
  capabilities: z
    .array(CapabilityKey)
    .optional()
    .describe('Keeps models with every capability key listed, e.g. ["input:image", "tool_use"].'),
  input_modalities: z.array(Modality).optional().describe('Keeps models that accept every modality listed.'),
  output_modalities: z.array(Modality).optional().describe('Keeps models that produce every modality listed.'),
  developer: z
    .array(z.string().min(1).max(100))
    .optional()
    .describe('Keeps models by any developer listed, names exactly as published (["OpenAI", "Anthropic"]).'),
  min_context_window: Tokens.optional().describe('Keeps models whose context window is at least this many tokens.'),
  min_output_tokens: Tokens.optional().describe('Keeps models whose maximum output is at least this many tokens.'),
  max_blended_price: z
    .number()
    .min(0)
    .max(9_999_999)
    .optional()
    .describe(
      'Keeps priced models whose blended price ((3 x input + output) / 4, USD per million tokens) is at most this.',
    ),
  open_weights: z.boolean().optional().describe('Keeps models whose weights are open (true) or not (false).'),
  sort: Sort.optional().describe(
    'popular (default): served by more providers first; newest: release date; recent: newest activity; alphabetical.',
  ),
  page: z.number().int().min(1).max(1_000_000).optional().describe('One-based page (default 1).'),
  page_size: z
    .number()
    .int()
    .min(1)
    .max(MCP_MAX_PAGE_SIZE)
    .optional()
    .describe(`Models per page, at most ${MCP_MAX_PAGE_SIZE} (default ${MCP_DEFAULT_PAGE_SIZE}).`),
  lane: LaneArg.optional(),
  locale: LocaleArg.optional(),
  include: Includes.optional(),
});
export type SearchModelsInput = z.infer<typeof SearchModelsInput>;
export const SearchModelsOutput = ListResponse.shape.data;

export const GetModelInput = z.strictObject({
  slug: Slug,
  include: Includes.optional(),
  locale: LocaleArg.optional(),
  lane: LaneArg.optional(),
});
export const GetModelOutput = z.strictObject({ model: ModelDetail });

export const CompareModelsInput = z.strictObject({
  slugs: z.array(Slug).min(2).max(MAX_COMPARED).describe(`The models to compare, 2 to ${MAX_COMPARED} slugs.`),
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
  capabilities: z.array(CapabilityKey).describe('The capability keys the model has (search_models capabilities).'),
  benchmarks: z
    .array(
      BenchmarkEntry.pick({ metric_key: true, label: true, value: true, unit: true, rank: true, ranked_count: true }),
    )
    .describe("The model's headline benchmark values (benchmark_summary)."),
});
export const CompareModelsOutput = z.strictObject({ models: z.array(ComparisonRow) });

export const GetPricesInput = z.strictObject({
  slug: Slug,
  at: z.iso
    .date()
    .optional()
    .describe('A date (YYYY-MM-DD): the prices on that day. Price history is not published yet: an error for now.'),
  lane: LaneArg.optional(),
});
export const GetPricesOutput = z.strictObject({
  slug: z.string(),
  pricing: PricingDetail.nullable().describe("The model's current price card; null: no price in the verified lane."),
});

export const ListMetricsInput = z.strictObject({});
export const ListMetricsOutput = MetricsResponse.shape.data;

export const ListChangesInput = z.strictObject({
  since: RevisionId.optional().describe(
    'A publication revision (publicationRevision of an answer, or latest of the last list_changes): only later changes.',
  ),
});
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
      'one page of models with pagination, as GET /api/v1/models answers.',
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
    description: "A model's current prices (USD per million tokens).",
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
