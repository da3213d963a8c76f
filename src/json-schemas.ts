// JSON Schemas (draft 2020-12) generated from the zod schemas, for people and tools outside TypeScript:
// editors checking data/ files, API clients, and the tests that validate every published file.
// `npm run schemas` writes them to schemas/<name>.schema.json; test/schemas.test.ts fails when those are stale.
//
// Source records are described as authored (`io: 'input'`: fields with a default are optional); published files
// as written (`io: 'output'`): API responses from schema/api.ts, the release's own files from publication/files.ts.
import { z } from 'zod';
import { ChangeList, ListArtifact, Manifest, PublicationMeta } from './publication/files.js';
import {
  CatalogResponse,
  ChangesResponse,
  DetailResponse,
  ListResponse,
  MetricsResponse,
  Problem,
} from './schema/api.js';
import {
  BenchmarkResult,
  MetricsFile,
  ModelRecord,
  OfferRecord,
  OverridesFile,
  PriceHistoryRecord,
  PriceObservation,
  ProvidersFile,
  SiteFile,
  SourcesFile,
  SpeedRun,
} from './schema/source.js';
import { Snapshot } from './schema/snapshot.js';
import { ModelPricesResponse, PricesArtifactFile, PricesAtResponse } from './schema/history.js';

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
  ProvidersFile: { schema: ProvidersFile, io: 'input', description: 'data/providers.yaml' },
  OfferRecord: { schema: OfferRecord, io: 'input', description: 'one line of data/offers/<provider>.jsonl' },
  PriceHistoryRecord: {
    schema: PriceHistoryRecord,
    io: 'input',
    description: "one line of data/price-history/*.jsonl: an offer's price over a range of days",
  },
  // published files
  ModelPricesResponse: {
    schema: ModelPricesResponse,
    io: 'output',
    description: "GET /api/v1/models/{slug}/prices[?at=]: a model's dated prices (api/v1/models/<slug>/prices.json)",
  },
  PricesAtResponse: {
    schema: PricesAtResponse,
    io: 'output',
    description: "GET /api/v1/prices?at=: every model's headline price in force on a day",
  },
  PricesArtifact: {
    schema: PricesArtifactFile,
    io: 'output',
    description:
      "artifacts/prices.json: every model's offer histories and headline offer, for the gateway's ?at= answers",
  },
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
  ChangesResponse: {
    schema: ChangesResponse,
    io: 'output',
    description:
      'GET /api/v1/changes[?since=REVISION]: api/v1/changes/index.json and api/v1/changes/since/<revision>.json',
  },
  Snapshot: {
    schema: Snapshot,
    io: 'output',
    description: 'artifacts/snapshot.json of a release: the semantic snapshot a later diff compares against',
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
