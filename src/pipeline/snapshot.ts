// The semantic snapshot of a publication, from the computed data: the facts a reader of the API sees, per model
// and for the catalog, without the combinations the bodies repeat them in (locales x lanes x variants x includes x
// pages). pipeline/diff.ts compares two of them; the build writes one per release (artifacts/snapshot.json).
import { QUERY_LANES, type Offer } from '../schema/api.js';
import type { LaneFigures, Snapshot, SnapshotContent, SnapshotModel } from '../schema/snapshot.js';
import type { Computed, LaneView } from './compute/index.js';
import { NO_TESTS } from './compute/stats.js';
import { offerKey } from './compute/offers.js';
import { STREAM_CHUNK_BYTES } from '../publication/made-body.js';
import { PiecesFile } from '../publication/pieces-file.js';
import type { PendingBody } from '../publication/writer.js';
import { toInstant } from './validate.js';

export const SNAPSHOT_FILE = 'artifacts/snapshot.json';

/** The key a benchmark value is filed under in a model's figures and in the leaderboards. */
const benchmarkKey = (metricKey: string) => metricKey;

function laneFigures(view: LaneView, slug: string): LaneFigures {
  const price = view.prices.get(slug);
  const benchmarks: LaneFigures['benchmarks'] = {};
  for (const p of view.placements.get(slug) ?? []) {
    const row = p.board.rows[p.index]!;
    benchmarks[benchmarkKey(p.board.metric.key)] = {
      value: row.value,
      rank: row.rank,
      eval_date: toInstant(row.eval_date),
      stderr: row.stderr,
      confidence: row.confidence,
    };
  }
  return {
    stats: { ...(view.stats.get(slug) ?? NO_TESTS) },
    pricing: price
      ? {
          input_price_per_million: price.input_price_per_million,
          output_price_per_million: price.output_price_per_million,
          updated_at: price.updated_at,
          headline_offer: price.offer && offerKey(price.offer),
        }
      : null,
    benchmarks,
  };
}

/** Each offer's count of published price rows and its newest row's start: a new row changes its offer. */
function historySummary(c: Computed, slug: string): SnapshotModel['price_history'] {
  const offers = c.history.get(slug)?.offers ?? [];
  return Object.fromEntries(
    offers.map((o) => [
      `${o.provider}/${o.provider_model_id}`,
      { rows: o.history.length, latest: o.history.at(-1)!.effective_from },
    ]),
  );
}

/** A model's offers by `[provider/provider_model_id]` (the form a diff path names them in). */
function offerFigures(offers: readonly Offer[]): NonNullable<SnapshotModel['pricing']>['offers'] {
  const out: NonNullable<SnapshotModel['pricing']>['offers'] = {};
  for (const { provider, provider_model_id, ...rest } of offers)
    out[`[${offerKey({ provider, provider_model_id })}]`] = rest;
  return out;
}

/** The snapshot of what a build of `c` publishes. `dataRevision`: dataRevision() of the data (pipeline/build.ts). */
export function snapshotOf(c: Computed, dataRevision: string): SnapshotContent {
  const site = c.data.site;
  const all = c.lanes.all; // every public model, and every public benchmark value: a superset of the other lanes
  const metrics: SnapshotContent['catalog']['metrics'] = {};
  for (const b of all.boards.values()) {
    const m = b.metric;
    metrics[benchmarkKey(m.key)] = {
      label: m.label,
      benchmark: m.benchmark,
      group: m.group,
      unit: m.unit,
      higher_is_better: m.higher_is_better,
      aggregate: m.aggregate,
      headline: m.headline,
    };
  }
  const leaderboards = {} as SnapshotContent['catalog']['leaderboards'];
  for (const lane of QUERY_LANES) {
    leaderboards[lane] = {};
    for (const b of c.lanes[lane].boards.values())
      leaderboards[lane][benchmarkKey(b.metric.key)] = { ranked_count: b.rows.length };
  }
  const visible = QUERY_LANES.map((lane) => [lane, new Set(c.lanes[lane].models.map((m) => m.slug))] as const);
  const models: Record<string, SnapshotModel> = {};
  for (const m of all.models) {
    const o = c.overrides.get(m.slug);
    const { keys: _derived, ...capabilities } = c.capabilities.get(m.slug)!;
    const display: SnapshotModel['display'] = {};
    if (o?.name !== undefined) display.name = o.name;
    if (o?.description && Object.keys(o.description).length) display.description = { ...o.description };
    if (o?.documentation_url !== undefined) display.documentation_url = o.documentation_url;
    if (o?.hub_url !== undefined) display.hub_url = o.hub_url;
    const lanes: SnapshotModel['lanes'] = {};
    for (const [lane, slugs] of visible) if (slugs.has(m.slug)) lanes[lane] = laneFigures(c.lanes[lane], m.slug);
    models[m.slug] = {
      id: m.id,
      name: m.name,
      developer: m.developer,
      release_date: toInstant(m.release_date),
      documentation_url: m.documentation_url,
      hub_url: m.hub_url,
      lane: m.lane,
      description: { ...m.description },
      context_window_tokens: m.context_window_tokens,
      max_output_tokens: m.max_output_tokens,
      capabilities,
      display,
      price_history: historySummary(c, m.slug),
      pricing: { offers: offerFigures(c.offers.get(m.slug) ?? []) },
      lifecycle: c.lifecycles.get(m.slug)!,
      lanes,
    };
  }
  return {
    dataRevision,
    catalog: { site: { name: site.name, url: site.url, schema_version: site.schema_version }, metrics, leaderboards },
    models,
  };
}

/** JSON with object keys sorted at every level (arrays keep their order): the same snapshot, the same bytes. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = definedKeys(v as Record<string, unknown>);
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

const definedKeys = (o: Record<string, unknown>) =>
  Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();

/** canonicalJson in pieces: the objects of the first `depth` levels key by key, each value below them whole. */
function* canonicalPieces(v: unknown, depth: number): Generator<string> {
  if (depth === 0 || v === null || typeof v !== 'object' || Array.isArray(v)) {
    yield canonicalJson(v);
    return;
  }
  const o = v as Record<string, unknown>;
  yield '{';
  for (const [i, k] of definedKeys(o).entries()) {
    yield `${i ? ',' : ''}${JSON.stringify(k)}:`;
    yield* canonicalPieces(o[k], depth - 1);
  }
  yield '}';
}

/**
 * artifacts/snapshot.json as a body for writeBodies: its publicationRevision is the one that last changed it. Its
 * bytes are made a model at a time into a file in `dir` (PiecesFile), where they wait for the end of the build: 30 MB
 * at 2,000 models, and a third of the snapshot's objects.
 */
export function snapshotBody(s: SnapshotContent, dir: string): PendingBody {
  const pieces = canonicalPieces(s, 2);
  pieces.next(); // the opening brace: the body's own fields come first
  // Written and read back a streamed body's chunk at a time: a larger piece would be a chunk of its own.
  const file = new PiecesFile(dir, 'snapshot');
  let chunk = [','];
  let chunkLength = 0;
  for (const piece of pieces) {
    chunk.push(piece);
    chunkLength += piece.length;
    if (chunkLength < STREAM_CHUNK_BYTES) continue;
    file.append(Buffer.from(chunk.join('')));
    [chunk, chunkLength] = [[], 0];
  }
  file.append(Buffer.from(chunk.join('')));
  const size = file.size;
  return {
    path: SNAPSHOT_FILE,
    head: '{"kind":"modelpub.snapshot","publicationRevision":',
    tail: {
      size,
      pieces: () =>
        Array.from({ length: Math.ceil(size / STREAM_CHUNK_BYTES) }, (_, i) => {
          const from = i * STREAM_CHUNK_BYTES;
          return file.piece(from, Math.min(STREAM_CHUNK_BYTES, size - from), "the snapshot's bytes");
        }),
    },
  };
}

/** The content of a snapshot file (what diffs compare). */
export const contentOf = ({ dataRevision, catalog, models }: Snapshot): SnapshotContent => ({
  dataRevision,
  catalog,
  models,
});
