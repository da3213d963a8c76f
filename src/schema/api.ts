// Published response shapes (SPEC part 2) and the publication's own files (manifest, change list).
// JSON Schemas under schemas/ are generated from these; test/schemas.test.ts fails when they are stale.
import { z } from 'zod';
import { CAPABILITY_MODALITIES, Locale, Metric, Modality } from './source.js';

export const INCLUDES = ['benchmarks', 'capabilities', 'pricing'] as const; // canonical (sorted) order
export const Include = z.enum(INCLUDES);
export type Include = z.infer<typeof Include>;
export const QUERY_LANES = ['verified', 'provisional', 'all'] as const;
export const QueryLane = z.enum(QUERY_LANES);
export type QueryLane = z.infer<typeof QueryLane>;
export const SORTS = ['popular', 'recent', 'newest', 'alphabetical'] as const;
export const Sort = z.enum(SORTS);
export type Sort = z.infer<typeof Sort>;

const Instant = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO 8601 UTC with milliseconds');
/**
 * A publication revision id: it names a release folder and is sent in a header, so one path segment of ASCII
 * letters, digits, '.', '_' and '-' (not starting with a dot), at most 64 characters.
 */
export const RevisionId = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    "1 to 64 ASCII letters, digits, '.', '_' or '-', not starting with '.', '_' or '-'",
  );

export const Attribution = z.strictObject({
  required: z.literal(true),
  name: z.string(),
  url: z.string(),
  text: z.string(),
});

export const Stats = z.strictObject({
  total_tests: z.number().int().min(0),
  /** null when total_tests is 0: no measurement, not a measured zero. */
  average_tokens_per_second: z.number().nullable(),
  /** milliseconds */
  average_first_token_latency: z.number().nullable(),
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
    }),
  ),
});
export const CategoryPerformance = z.strictObject({
  group: z.string(),
  metrics_available: z.number().int().min(0),
  metrics_covered: z.number().int().min(0),
  coverage: z.number().min(0).max(1),
  /** Mean leaderboard percentile (100 = first) over the covered metrics; null when none is covered. */
  score: z.number().min(0).max(100).nullable(),
});

export const PricingSummary = z.strictObject({
  input_price_per_million: z.number(),
  output_price_per_million: z.number(),
  blended_price_per_million: z.number(),
  updated_at: Instant,
});
export const PricingDetail = PricingSummary.extend({
  currency: z.literal('USD'),
  blended_weighting: z.literal('3:1 input:output'),
  observations: z.number().int().min(1),
  sources: z.array(z.string()),
});

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
  /** The filterable names (`capabilities=` on the list), sorted. */
  keys: z.array(CapabilityKey),
  input_modalities: z.array(Modality),
  output_modalities: z.array(Modality),
  reasoning: z.boolean(),
  tool_use: z.boolean(),
  structured_output: z.boolean().nullable(),
  attachments: z.boolean(),
  temperature: z.boolean(),
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
      /** sha256 over the sorted evidence hashes of the records this response rests on */
      evidence_digest: z.string(),
    }),
  ),
});

/** Sections added by `include` to list items; the detail's `benchmarks` also adds the full metric list. */
const IncludeSections = {
  benchmark_groups: z.array(BenchmarkGroup).optional(),
  category_performance: z.array(CategoryPerformance).optional(),
  pricing: PricingDetail.nullable().optional(),
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
  /** null when the lane holds no price observation for the model */
  pricing_summary: PricingSummary.nullable(),
  benchmark_count: z.number().int().min(0),
  benchmark_summary: z.array(BenchmarkEntry),
  provenance: PublicProvenance,
  benchmarks: z.array(BenchmarkEntry).optional(),
  ...IncludeSections,
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
    /** The revision that last changed this body; the current one is in the X-Publication-Revision header. */
    publicationRevision: RevisionId,
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
  /** Shown in a model's benchmark_summary. */
  headline: z.boolean(),
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

export const ManifestEntry = z.strictObject({
  path: z.string(),
  sha256: z.string(),
  bytes: z.number().int().min(0),
  content_type: z.string(),
  /** Revision and time at which this body last changed (its Last-Modified). */
  revision: RevisionId,
  last_modified: Instant,
});
export type ManifestEntry = z.infer<typeof ManifestEntry>;
export const Manifest = z.strictObject({
  schemaVersion: z.string(),
  publicationRevision: RevisionId,
  publishedAt: Instant,
  files: z.array(ManifestEntry),
});
export type Manifest = z.infer<typeof Manifest>;
export const ChangeList = z.strictObject({
  publicationRevision: RevisionId,
  previousRevision: RevisionId.nullable(),
  added: z.array(z.string()),
  changed: z.array(z.string()),
  removed: z.array(z.string()),
});
export type ChangeList = z.infer<typeof ChangeList>;

/** publication.json of a release: what the gateway needs besides the manifest. */
export const PublicationMeta = z.strictObject({
  schemaVersion: z.string(),
  publicationRevision: RevisionId,
  publishedAt: Instant,
  /** List page sizes prebuilt for every list variant and sort. */
  pageSizes: z.array(z.number().int().min(1).max(100)).min(1),
  /** Number of models per list variant, keyed `<lane>.<public|display>`. */
  totals: z.record(z.string(), z.number().int().min(0)),
  /** The attribution object every response repeats (SPEC 2.1): the gateway needs it to compose list pages. */
  attribution: Attribution,
  /**
   * SHA-256 of this release's manifest.json: what tells two builds of one revision apart (other page sizes, or a
   * --revision given again over other data), for a gateway polling a static host. Absent in releases of older builds.
   */
  manifestSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});
export type PublicationMeta = z.infer<typeof PublicationMeta>;
