// Published response shapes (SPEC part 2) and the publication's own files (manifest, change list).
// JSON Schemas under schemas/ are generated from these; test/schemas.test.ts fails when they are stale.
import { z } from 'zod';
import { Instant, RevisionId } from './primitives.js';
import {
  CAPABILITY_MODALITIES,
  LIFECYCLE_STATUSES,
  LifecycleStatus,
  Locale,
  Metric,
  Modality,
  OfferRecord,
  PriceCard,
  ProviderId as SourceProviderId,
} from './source.js';

export const INCLUDES = ['benchmarks', 'capabilities', 'pricing'] as const; // canonical (sorted) order
export const Include = z.enum(INCLUDES);
export type Include = z.infer<typeof Include>;
export const QUERY_LANES = ['verified', 'provisional', 'all'] as const;
export const QueryLane = z.enum(QUERY_LANES);
export type QueryLane = z.infer<typeof QueryLane>;
export const SORTS = ['popular', 'recent', 'newest', 'alphabetical'] as const;
export const Sort = z.enum(SORTS);
export type Sort = z.infer<typeof Sort>;

export const Attribution = z.strictObject({
  required: z.literal(true),
  name: z.string(),
  url: z.string(),
  text: z.string(),
});

export const Stats = z.strictObject({
  total_tests: z
    .number()
    .int()
    .min(0)
    .describe('Every test run of the model in the lane, those whose source could not measure their speed included.'),
  average_tokens_per_second: z
    .number()
    .nullable()
    .describe(
      'Median over the runs whose speed was measured; null when there is none: no measurement, not a measured zero.',
    ),
  average_first_token_latency: z
    .number()
    .nullable()
    .describe('Median over the test runs, in milliseconds; null when total_tests is 0.'),
  last_test_at: Instant.nullable(),
});
export const PerformanceSummary = Stats.pick({ average_tokens_per_second: true, average_first_token_latency: true });

export const NearbyModel = z.strictObject({
  slug: z.string(),
  name: z.string(),
  value: z.number(),
  rank: z.number().int().min(1),
});

export const BenchmarkEntry = z.strictObject({
  metric_key: z.string(),
  label: z.string(),
  group: z.string(),
  value: z.number(),
  unit: z.string(),
  rank: z.number().int().min(1),
  ranked_count: z.number().int().min(1),
  higher_is_better: z.boolean(),
  is_aggregate: z.boolean(),
  eval_date: Instant,
  variant: z
    .string()
    .nullable()
    .describe(
      'The run the value comes from, as its source sets it apart ("reasoning effort high, diff edit ' +
        'format"); null when the source reports a single run.',
    ),
  stderr: z.number().nullable(),
  confidence: z.number(),
  updated_at: Instant,
  nearby_models: z.array(NearbyModel),
});
export type BenchmarkEntry = z.infer<typeof BenchmarkEntry>;

export const BenchmarkGroup = z.strictObject({
  benchmark: z.string(),
  group: z.string(),
  metrics: z.array(
    z.strictObject({
      metric_key: z.string(),
      label: z.string(),
      value: z.number(),
      unit: z.string(),
      rank: z.number().int(),
      ranked_count: z.number().int(),
      variant: z.string().nullable(),
    }),
  ),
});
export const CategoryPerformance = z.strictObject({
  group: z.string(),
  metrics_available: z.number().int().min(0),
  metrics_covered: z.number().int().min(0),
  coverage: z.number().min(0).max(1),
  score: z
    .number()
    .min(0)
    .max(100)
    .nullable()
    .describe('Mean leaderboard percentile (100 = first) over the covered metrics; null when none is covered.'),
});

export const PricingSummary = z.strictObject({
  input_price_per_million: z.number(),
  output_price_per_million: z.number(),
  blended_price_per_million: z.number(),
  updated_at: Instant,
});

/** The price fields as an offer record has them (schema/source.ts), published with the same names and meaning. */
const Card = OfferRecord.shape;
const ProviderId = SourceProviderId.describe(
  'The provider id, as the `provider` filter takes it (`groq`, `amazon-bedrock`).',
);

/** One provider's listing of a model: where it can be called, at what price and within what limits. */
export const Offer = z
  .strictObject({
    provider: ProviderId,
    provider_name: z.string().describe("The provider's name, for people."),
    provider_model_id: z.string().describe('The model id a client sends to this provider.'),
    first_party: Card.first_party,
    ...PriceCard.shape,
    context_window_tokens: Card.context_window_tokens,
    max_input_tokens: Card.max_input_tokens,
    max_output_tokens: Card.max_output_tokens,
    status: Card.status,
    free: z.boolean().describe("true for a reseller's 0/0 listing: free or unpriced, never the model's price."),
    updated_at: Instant.describe('When the listing was last observed to change.'),
  })
  .describe("One provider's offer of a model, with its whole price card and limits.");
export type Offer = z.infer<typeof Offer>;

const noHeadline = 'null when the model has no headline price';
/**
 * `pricing` on list items: the headline prices (those of pricing_summary), the headline offer's other prices, tiers
 * and modes, and how many offers there are.
 */
export const PricingCard = z
  .strictObject({
    input_price_per_million: z.number().nullable().describe(`The headline input price; ${noHeadline}.`),
    output_price_per_million: z.number().nullable().describe(`The headline output price; ${noHeadline}.`),
    blended_price_per_million: z.number().nullable().describe(`(3 x input + output) / 4; ${noHeadline}.`),
    updated_at: Instant.nullable().describe(`When the headline price was observed; ${noHeadline}.`),
    currency: z.literal('USD'),
    blended_weighting: z.literal('3:1 input:output'),
    observations: z.number().int().min(0).describe('How many price observations the headline rests on (0: none).'),
    sources: z.array(z.string()).describe('The sources of those observations.'),
    price_since: z.iso
      .date()
      .nullable()
      .describe(
        "The effective_from of the headline offer's current models-dev price row: since when this price holds; null " +
          'when that row is first_seen (when models.dev began listing the offer, not a price change) or there is none',
      ),
    headline_offer: z
      .strictObject({ provider: ProviderId, provider_model_id: z.string() })
      .nullable()
      .describe(
        "The offer the headline prices are read from (the developer's own listing where it has one); " +
          `${noHeadline} (a reseller's free 0/0 listing is never the headline).`,
      ),
    cache_read_price_per_million: Card.cache_read_price_per_million,
    cache_write_price_per_million: Card.cache_write_price_per_million,
    reasoning_price_per_million: Card.reasoning_price_per_million,
    input_audio_price_per_million: Card.input_audio_price_per_million,
    output_audio_price_per_million: Card.output_audio_price_per_million,
    tiers: Card.tiers,
    modes: Card.modes,
    offer_count: z.number().int().min(0).describe('How many offers the model has, priced or not.'),
  })
  .describe("A model's price card: the headline prices, and the rest of the headline offer's card.");
export type PricingCard = z.infer<typeof PricingCard>;
/** `pricing` on the detail and in the catalog: the card and every offer. */
export const PricingDetail = PricingCard.extend({
  offers: z
    .array(Offer)
    .describe(
      'Every offer of the model: by blended price (3:1), then provider, then provider_model_id; unpriced and free ' +
        'listings last.',
    ),
});
export type PricingDetail = z.infer<typeof PricingDetail>;

export { LIFECYCLE_STATUSES, LifecycleStatus };
export const Lifecycle = z
  .strictObject({
    status: LifecycleStatus.describe(
      "From the developer's own listing; active where it states none. A reseller's status stays on its offer.",
    ),
    deprecation_date: Instant.nullable().describe('When the developer deprecated the model; null: not stated.'),
    retirement_date: Instant.nullable().describe('When the model stops (or stopped) being served; null: not stated.'),
    successor: z.string().nullable().describe('The slug of the model that replaces it; null: not stated.'),
    aliases: z.array(z.string()).describe('The aliases that name this dated snapshot (slugs, sorted).'),
    // Not `snapshots`: SPEC part 1 keeps "private snapshots" out of every answer, and clients and the conformance
    // checker treat any key named like one as a leaked private field.
    dated_versions: z
      .array(z.string())
      .describe('On an alias: every dated snapshot (version) it has named (slugs, sorted); [] on any other model.'),
  })
  .describe('Where the model stands in its life, and its alias / dated snapshot links.');
export type Lifecycle = z.infer<typeof Lifecycle>;

/** Capability flags that are keys when true (compute/capabilities.ts); modalities are keys as input:<m>, output:<m>. */
export const CAPABILITY_FLAGS = [
  'reasoning',
  'tool_use',
  'structured_output',
  'attachments',
  'temperature',
  'open_weights',
] as const;
/** Every capability key a model can publish, sorted: a fixed vocabulary, so the list filter can check it up front. */
export const CAPABILITY_KEYS = [
  ...CAPABILITY_MODALITIES.map((m) => `input:${m}` as const),
  ...CAPABILITY_MODALITIES.map((m) => `output:${m}` as const),
  ...CAPABILITY_FLAGS,
].sort();
export const CapabilityKey = z.enum(CAPABILITY_KEYS);

export const Capabilities = z.strictObject({
  keys: z.array(CapabilityKey).describe('The filterable names (`capabilities=` on the list), sorted.'),
  input_modalities: z.array(Modality),
  output_modalities: z.array(Modality),
  reasoning: z.boolean(),
  tool_use: z.boolean(),
  structured_output: z.boolean().nullable(),
  attachments: z.boolean(),
  temperature: z
    .boolean()
    .nullable()
    .describe('Whether the temperature can be set; null where the source does not say.'),
  open_weights: z.boolean(),
  knowledge_cutoff: z.string().nullable(),
});

export const PublicProvenance = z.strictObject({
  sources: z.array(
    z.strictObject({
      id: z.string(),
      name: z.string(),
      url: z.string(),
      license: z.string(),
      records: z.number().int().min(1),
      evidence_digest: z
        .string()
        .describe('sha256 over the sorted evidence hashes of the records this response rests on'),
    }),
  ),
});

/**
 * Sections added by `include` to list items; the detail's `benchmarks` also adds the full metric list, and its
 * `pricing` every offer. `pricing` is null only for a model without any offer.
 */
const IncludeSections = {
  benchmark_groups: z.array(BenchmarkGroup).optional(),
  category_performance: z.array(CategoryPerformance).optional(),
  pricing: PricingCard.nullable().optional(),
  capabilities: Capabilities.optional(),
};

/** The fields a list item and a model detail share, in this order (SPEC 2.2 and 2.3). */
const ModelCore = {
  id: z.number().int(),
  slug: z.string(),
  name: z.string(),
  service_url: z.string(),
  description: z.string(),
  developer: z.string(),
  release_date: Instant,
  context_window_tokens: z.number().int().min(0),
  max_output_tokens: z.number().int().min(0),
  documentation_url: z.string().nullable(),
  hub_url: z.string().nullable(),
  stats: Stats,
  performance_summary: PerformanceSummary,
};

export const ListItem = z.strictObject({
  ...ModelCore,
  ...IncludeSections,
});
export type ListItem = z.infer<typeof ListItem>;

export const ModelDetail = z.strictObject({
  ...ModelCore,
  pricing_summary: PricingSummary.nullable().describe('null when the lane holds no price observation for the model'),
  benchmark_count: z.number().int().min(0),
  benchmark_summary: z.array(BenchmarkEntry),
  provenance: PublicProvenance,
  lifecycle: Lifecycle,
  benchmarks: z.array(BenchmarkEntry).optional(),
  ...IncludeSections,
  pricing: PricingDetail.nullable().optional(),
});
export type ModelDetail = z.infer<typeof ModelDetail>;

export const Pagination = z.strictObject({
  page: z.number().int().min(1),
  page_size: z.number().int().min(1).max(100),
  total: z.number().int().min(0),
  total_pages: z.number().int().min(0),
});

const envelope = <T extends z.ZodType>(data: T) =>
  z.strictObject({
    schemaVersion: z.string(),
    publicationRevision: RevisionId.describe(
      'The revision that last changed this body; the current one is in the X-Publication-Revision header.',
    ),
    tier: z.literal('free'),
    locale: Locale,
    attribution: Attribution,
    data,
  });
export const ListResponse = envelope(z.strictObject({ models: z.array(ListItem), pagination: Pagination }));
export const DetailResponse = envelope(ModelDetail);

/** A leaderboard the publication has (GET /api/v1/metrics): what a metric selector or a table's columns need. */
export const MetricInfo = z.strictObject({
  metric_key: z.string(),
  label: z.string(),
  benchmark: z.string(),
  group: Metric.shape.group,
  unit: Metric.shape.unit,
  higher_is_better: z.boolean(),
  is_aggregate: z.boolean(),
  headline: z.boolean().describe("Shown in a model's benchmark_summary."),
  /** How many models the metric ranks in each lane (its leaderboard's length there; 0: none in that lane). */
  ranked_count: z.strictObject({
    verified: z.number().int().min(0),
    provisional: z.number().int().min(0),
    all: z.number().int().min(0),
  }),
});
export const MetricsResponse = envelope(z.strictObject({ metrics: z.array(MetricInfo) }));

/** A model in the catalog export: its detail's data with every include (benchmarks, capabilities, pricing). */
export const CatalogModel = ModelDetail.required({
  benchmarks: true,
  benchmark_groups: true,
  category_performance: true,
  pricing: true,
  capabilities: true,
});
/** GET /api/v1/catalog: every model of a lane in one body, by slug. */
export const CatalogResponse = envelope(
  z.strictObject({ models: z.array(CatalogModel), total: z.number().int().min(0) }),
);

export const Problem = z.strictObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: z.string(),
  instance: z.string().optional(),
  invalid_params: z.array(z.strictObject({ name: z.string(), reason: z.string() })).optional(),
});

// The parts a response is assembled from (publication/assemble.ts): the renderer produces these, typed, and the
// byte assembly splices the include sections into the core objects.
export const ListItemCore = ListItem.omit({
  benchmark_groups: true,
  category_performance: true,
  pricing: true,
  capabilities: true,
});
export type ListItemCore = z.infer<typeof ListItemCore>;
export const DetailCore = ModelDetail.omit({
  benchmarks: true,
  benchmark_groups: true,
  category_performance: true,
  pricing: true,
  capabilities: true,
});
export type DetailCore = z.infer<typeof DetailCore>;
/** What each include adds to a list item. */
export const ItemSections = z.strictObject({
  benchmarks: z.strictObject({
    benchmark_groups: z.array(BenchmarkGroup),
    category_performance: z.array(CategoryPerformance),
  }),
  capabilities: z.strictObject({ capabilities: Capabilities }),
  pricing: z.strictObject({ pricing: PricingCard.nullable() }),
});
export type ItemSections = z.infer<typeof ItemSections>;
/** What each include adds to a detail: the item's sections, the full metric list with nearby models, every offer. */
export const DetailSections = ItemSections.extend({
  benchmarks: ItemSections.shape.benchmarks.extend({ benchmarks: z.array(BenchmarkEntry) }),
  pricing: z.strictObject({ pricing: PricingDetail.nullable() }),
});
export type DetailSections = z.infer<typeof DetailSections>;
export type Stats = z.infer<typeof Stats>;
export type Capabilities = z.infer<typeof Capabilities>;
export type PublicProvenanceSource = z.infer<typeof PublicProvenance>['sources'][number];
export type Attribution = z.infer<typeof Attribution>;
export type BenchmarkGroup = z.infer<typeof BenchmarkGroup>;

// ---- semantic changes: what changed between two publications, per model and field (pipeline/diff.ts) ------------

/** A field's value before or after a change: any JSON value (a `{}` schema, which needs no $defs). */
const JsonValue = z.unknown();
/**
 * One changed field. `path` is dotted (`description.en`, `benchmarks.<metric_key>.rank`: a metric key is everything
 * between the first and the last dot); an offer is named in brackets by provider and provider model id
 * (`pricing.offers[groq/openai/gpt-oss-120b].cache_read_price_per_million`). `old` is missing when the field did not
 * exist before (a first price, a new benchmark value, a new override), `new` when it no longer exists. `lanes`, on
 * figures computed per lane (stats, pricing, benchmarks, leaderboards), names the query lanes in which this change
 * happened.
 */
export const FieldChange = z.strictObject({
  path: z.string(),
  old: JsonValue.optional(),
  new: JsonValue.optional(),
  lanes: z.array(QueryLane).min(1).optional(),
});
export type FieldChange = z.infer<typeof FieldChange>;
export const ModelChange = z.strictObject({
  slug: z.string(),
  name: z.string().describe("The model's name: the new one, or the last one for a removed model."),
  change: z.enum(['added', 'removed', 'changed']),
  fields: z.array(FieldChange).describe('The changed fields; empty for an added or removed model.'),
});
export type ModelChange = z.infer<typeof ModelChange>;
export const SemanticDiff = z.strictObject({
  models: z.array(ModelChange).describe('Models in slug order, each once.'),
  catalog: z
    .array(FieldChange)
    .describe(
      'Catalog-level changes: site, metrics (`metrics.<key>`), leaderboards (`leaderboards.<key>.ranked_count`).',
    ),
});
export type SemanticDiff = z.infer<typeof SemanticDiff>;
/** The semantic changes one publication made to the one before it. */
export const PublicationChanges = z.strictObject({
  publicationRevision: RevisionId,
  previousRevision: RevisionId,
  publishedAt: Instant,
  summary: z.string().describe('One line for a person: `1 model changed: gpt-4o (description.en)`.'),
  ...SemanticDiff.shape,
});
export type PublicationChanges = z.infer<typeof PublicationChanges>;
/** GET /api/v1/changes[?since=REVISION]: api/v1/changes/index.json and api/v1/changes/since/<revision>.json. */
export const ChangesResponse = z.strictObject({
  schemaVersion: z.string(),
  publicationRevision: RevisionId.describe(
    'The revision that last changed this body; the current one is in the X-Publication-Revision header.',
  ),
  tier: z.literal('free'),
  attribution: Attribution,
  data: z.strictObject({
    latest: RevisionId.describe('The current publication: the `since` to send next time.'),
    oldest: RevisionId.describe('The oldest revision `since` accepts (the feed keeps the last 30 publications).'),
    publications: z
      .array(PublicationChanges)
      .describe('Newest first: the publications after `since` (all that are kept, without it).'),
  }),
});
export type ChangesResponse = z.infer<typeof ChangesResponse>;
