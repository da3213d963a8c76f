// The semantic snapshot of a publication (artifacts/snapshot.json, listed in the manifest): the published facts per
// model and for the catalog, compact enough to keep one per release. A later build, `modelpub diff` and a fresh CI
// runner (through the remote layout) compare the data against it; pipeline/snapshot.ts makes it.
import { z } from 'zod';
import { Capabilities, Lifecycle, Offer, Stats } from './api.js';
import { Instant, RevisionId, Slug } from './primitives.js';
import { LOCALES, RecordLane } from './source.js';

const perLocale = <T extends z.ZodType>(t: T) =>
  z.strictObject(Object.fromEntries(LOCALES.map((l) => [l, t])) as Record<(typeof LOCALES)[number], T>);

/** The figures of one model computed in one query lane. */
export const LaneFigures = z.strictObject({
  stats: Stats,
  /** Blended is left out: it follows from these two, and would report each price change twice. */
  pricing: z
    .strictObject({
      input_price_per_million: z.number(),
      output_price_per_million: z.number(),
      updated_at: Instant,
      /** `provider/provider_model_id` of the headline offer, or null; absent in snapshots of builds without offers. */
      headline_offer: z.string().nullable().optional(),
    })
    .nullable(),
  /** By metric key. ranked_count is the leaderboard's, kept once in the catalog (`leaderboards`). */
  benchmarks: z.record(
    z.string(),
    z.strictObject({
      value: z.number(),
      rank: z.number().int().min(1),
      eval_date: Instant,
      stderr: z.number().nullable(),
      confidence: z.number(),
    }),
  ),
});
export type LaneFigures = z.infer<typeof LaneFigures>;

export const SnapshotModel = z.strictObject({
  id: z.number().int(),
  name: z.string(),
  developer: z.string(),
  release_date: Instant,
  documentation_url: z.string().nullable(),
  hub_url: z.string().nullable(),
  /** The lane of the model's own record. */
  lane: RecordLane,
  description: perLocale(z.string()),
  context_window_tokens: z.number().int().min(0),
  max_output_tokens: z.number().int().min(0),
  /** `keys` is left out: it is derived from the other fields, and would report each capability change twice. */
  capabilities: Capabilities.omit({ keys: true }),
  /** What the display-only overrides set (includeDisplayOnly=true); empty when none does. */
  display: z.strictObject({
    name: z.string().optional(),
    description: perLocale(z.string()).partial().optional(),
    documentation_url: z.string().nullable().optional(),
    hub_url: z.string().nullable().optional(),
  }),
  /**
   * Per offer (`<provider>/<provider_model_id>`) with dated prices: how many published rows, and the newest one's
   * effective_from. A new price row is a change of its offer here. Absent in snapshots built before dated prices.
   */
  price_history: z
    .record(z.string(), z.strictObject({ rows: z.number().int().min(1), latest: z.string().nullable() }))
    .optional(),
  /**
   * Every offer, keyed `[provider/provider_model_id]`, as published but for those two and its order (which follows
   * from the prices): a diff names a field `pricing.offers[groq/openai/gpt-oss-120b].cache_read_price_per_million`.
   * Absent in snapshots of builds without offers, as `lifecycle` is.
   */
  pricing: z
    .strictObject({ offers: z.record(z.string(), Offer.omit({ provider: true, provider_model_id: true })) })
    .optional(),
  lifecycle: Lifecycle.optional(),
  /** Per query lane the model is visible in. */
  lanes: z.strictObject({
    verified: LaneFigures.optional(),
    provisional: LaneFigures.optional(),
    all: LaneFigures.optional(),
  }),
});
export type SnapshotModel = z.infer<typeof SnapshotModel>;

export const SnapshotCatalog = z.strictObject({
  site: z.strictObject({ name: z.string(), url: z.string(), schema_version: z.string() }),
  /** The metrics that have a leaderboard in some lane, by key. */
  metrics: z.record(
    z.string(),
    z.strictObject({
      label: z.string(),
      benchmark: z.string(),
      group: z.string(),
      unit: z.string(),
      higher_is_better: z.boolean(),
      aggregate: z.boolean(),
      headline: z.boolean(),
    }),
  ),
  /** Per query lane, per metric key. */
  leaderboards: z.strictObject({
    verified: z.record(z.string(), z.strictObject({ ranked_count: z.number().int().min(1) })),
    provisional: z.record(z.string(), z.strictObject({ ranked_count: z.number().int().min(1) })),
    all: z.record(z.string(), z.strictObject({ ranked_count: z.number().int().min(1) })),
  }),
});

/** What is compared: the catalog and the models. */
export const SnapshotContent = z.strictObject({
  /**
   * The revision a build of the data gets unless --revision names one: equal means the same data, schema and tool,
   * so a build would publish the same bytes (pipeline/changes.ts skips it).
   */
  dataRevision: RevisionId,
  catalog: SnapshotCatalog,
  models: z.record(Slug, SnapshotModel),
});
export type SnapshotContent = z.infer<typeof SnapshotContent>;

/** artifacts/snapshot.json */
export const Snapshot = z.strictObject({
  kind: z.literal('modelpub.snapshot'),
  /** The revision that last changed this file. */
  publicationRevision: RevisionId,
  ...SnapshotContent.shape,
});
export type Snapshot = z.infer<typeof Snapshot>;
