// JSON Schemas (draft 2020-12) generated from the zod schemas, for people and tools outside TypeScript:
// editors checking data/ files, API clients, and the tests that validate every published file.
// `npm run schemas` writes them to schemas/<name>.schema.json; test/schemas.test.ts fails when those are stale.
//
// Source records are described as authored (`io: 'input'`: fields with a default are optional); published files
// as written (`io: 'output'`). The list artifact the gateway loads has no zod schema elsewhere: it is described here
// from the same building blocks.
import { z } from 'zod';
import {
  Attribution,
  BenchmarkGroup,
  Capabilities,
  CatalogResponse,
  CategoryPerformance,
  ChangeList,
  DetailResponse,
  ListItem,
  ListResponse,
  Manifest,
  MetricsResponse,
  PricingDetail,
  Problem,
  PublicationMeta,
  RevisionId,
  SORTS,
} from './api.js';
import {
  BenchmarkResult,
  LOCALES,
  MetricsFile,
  ModelRecord,
  OverridesFile,
  PriceObservation,
  SiteFile,
  Slug,
  SourcesFile,
  SpeedRun,
} from './source.js';

const perLocale = <T extends z.ZodType>(t: T) =>
  z.strictObject(Object.fromEntries(LOCALES.map((l) => [l, t])) as Record<(typeof LOCALES)[number], T>);

/** A list item without its include sections: the artifact keeps those apart, per section. */
const ArtifactItem = ListItem.omit({
  benchmark_groups: true,
  category_performance: true,
  pricing: true,
  capabilities: true,
});

/** artifacts/<lane>.<public|display>.json: what the gateway composes non-prebuilt list answers from (pipeline/build.ts artifactBody). */
export const ListArtifact = z.strictObject({
  kind: z.literal('modelpub.list-artifact'),
  publicationRevision: RevisionId,
  schemaVersion: z.string(),
  /** As every page carries it (and publication.json): a composed page takes all of its bytes from the artifact. */
  attribution: Attribution,
  /**
   * The list page sizes this publication prebuilds. Not read by the gateway: it is here so that a change of them
   * changes the artifact, and so its Last-Modified. A page size dropped leaves its pages composed from the artifact,
   * and their Last-Modified must come after every one the prebuilt pages had (If-Modified-Since), as for any body.
   */
  prebuiltPageSizes: z.array(z.number().int().min(1).max(100)),
  orders: z.strictObject(
    Object.fromEntries(SORTS.map((s) => [s, z.array(Slug)])) as Record<(typeof SORTS)[number], z.ZodArray<typeof Slug>>,
  ),
  models: z.record(
    Slug,
    z.strictObject({
      item: perLocale(ArtifactItem),
      sections: z.strictObject({
        benchmarks: z.strictObject({
          benchmark_groups: z.array(BenchmarkGroup),
          category_performance: z.array(CategoryPerformance),
        }),
        capabilities: z.strictObject({ capabilities: Capabilities }),
        pricing: z.strictObject({ pricing: PricingDetail.nullable() }),
      }),
      /** Folded (NFKD, marks removed, lower case) search text. */
      search: z.strictObject({ name: z.string(), slug: Slug, text: perLocale(z.string()) }),
    }),
  ),
});

interface Entry {
  schema: z.ZodType;
  io: 'input' | 'output';
  description: string;
}

/** Name -> zod schema. The name is the file name under schemas/ (without `.schema.json`). */
export const SCHEMAS: Readonly<Record<string, Entry>> = {
  // source records under data/
  SiteFile: { schema: SiteFile, io: 'input', description: 'data/site.yaml' },
  SourcesFile: { schema: SourcesFile, io: 'input', description: 'data/sources.yaml' },
  MetricsFile: { schema: MetricsFile, io: 'input', description: 'data/metrics.yaml' },
  ModelRecord: { schema: ModelRecord, io: 'input', description: 'data/models/<slug>.yaml (the slug is the file name)' },
  OverridesFile: { schema: OverridesFile, io: 'input', description: 'data/overrides/*.yaml: display-only overrides' },
  SpeedRun: { schema: SpeedRun, io: 'input', description: 'one line of data/measurements/speed/*.jsonl' },
  BenchmarkResult: {
    schema: BenchmarkResult,
    io: 'input',
    description: 'one line of data/measurements/benchmarks/*.jsonl',
  },
  PriceObservation: {
    schema: PriceObservation,
    io: 'input',
    description: 'one line of data/measurements/prices/*.jsonl',
  },
  // published files
  ListResponse: { schema: ListResponse, io: 'output', description: 'GET /api/v1/models: api/v1/list/**.json' },
  DetailResponse: {
    schema: DetailResponse,
    io: 'output',
    description: 'GET /api/v1/models/{slug}: api/v1/models/<slug>/*.json',
  },
  MetricsResponse: {
    schema: MetricsResponse,
    io: 'output',
    description: 'GET /api/v1/metrics: every leaderboard metric, with how many models it ranks per lane',
  },
  CatalogResponse: {
    schema: CatalogResponse,
    io: 'output',
    description: 'GET /api/v1/catalog: every model of a lane, each as its detail with every include',
  },
  Problem: { schema: Problem, io: 'output', description: 'error body (application/problem+json)' },
  Manifest: { schema: Manifest, io: 'output', description: 'manifest.json of a release' },
  ChangeList: { schema: ChangeList, io: 'output', description: 'changes.json of a release' },
  PublicationMeta: { schema: PublicationMeta, io: 'output', description: 'publication.json of a release' },
  ListArtifact: {
    schema: ListArtifact,
    io: 'output',
    description: 'artifacts/<lane>.<public|display>.json of a release',
  },
};

export type JsonSchema = Record<string, unknown>;

/** Every schema, by name, as a JSON Schema (draft 2020-12). */
export function jsonSchemas(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [name, { schema, io, description }] of Object.entries(SCHEMAS)) {
    const js = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'throw' }) as JsonSchema;
    out[name] = { ...js, title: name, description };
  }
  return out;
}

/** Object keys sorted at every level (arrays keep their order): the same schema always gives the same bytes. */
export function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

/** File name -> file text, as `npm run schemas` writes them under schemas/. */
export function schemaFiles(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(jsonSchemas()).map(([name, s]) => [
      `${name}.schema.json`,
      `${JSON.stringify(sortKeys(s), null, 2)}\n`,
    ]),
  );
}
