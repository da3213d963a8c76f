// Stage 3: everything the renderer needs, per lane. The rights filter runs first: nothing from a source whose
// licence does not allow redistribution (`redistributable: false` in sources.yaml) enters any computation.
import { createHash } from 'node:crypto';
import type { QueryLane } from '../../schema/api.js';
import type { DisplayOverride, RecordLane, Source } from '../../schema/source.js';
import type { ModelEntry, SourceData } from '../validate.js';
import { instantMs } from '../validate.js';
import { parseCapabilities, type ParsedCapabilities } from './capabilities.js';
import { headlineOffers, priceHistories, type ModelHistory } from './history.js';
import { isResellerZero, priceSummaries, type PriceSummary } from './prices.js';
import { buildLeaderboards, type Leaderboard, type Placement } from './ranks.js';
import { isSentinel, speedStats, type SentinelOf, type SpeedStats } from './stats.js';
import type { Lifecycle, Offer, PublicProvenanceSource } from '../../schema/api.js';
import { lifecycles } from './lifecycle.js';
import { offersByModel } from './offers.js';
import { SpeedRuns } from '../speed-runs.js';

export type PublicProvenanceEntry = PublicProvenanceSource;

export interface LaneView {
  lane: QueryLane;
  models: ModelEntry[]; // visible in this lane, sorted by slug
  stats: Map<string, SpeedStats>;
  prices: Map<string, PriceSummary>;
  boards: Map<string, Leaderboard>;
  placements: Map<string, Placement[]>;
  provenance: Map<string, PublicProvenanceEntry[]>;
  /**
   * Newest of the model's own update date and its measurements in this lane, in milliseconds since the epoch (a number:
   * a speed run's time is one already, and half a million of them made strings cost a second): orders `sort=recent`.
   */
  lastActivity: Map<string, number>;
}

/** Public records that are valid data but enter no published number; the build reports their counts. */
export interface LeftOut {
  /** Speed runs whose tokens/s is their source's "not measured" value: out of the tokens/s medians. */
  sentinelSpeedSamples: number;
  /** Resellers' 0/0 price listings: published as no price. */
  resellerZeroPrices: number;
}

export interface Computed {
  data: SourceData;
  lanes: Record<QueryLane, LaneView>;
  capabilities: Map<string, ParsedCapabilities>;
  overrides: Map<string, DisplayOverride>;
  /** Every public model's offers with their dated prices (compute/history.ts); lane-independent. */
  history: Map<string, ModelHistory>;
  /** Every public model's offers, ordered (compute/offers.ts); the same in each lane the model is visible in. */
  offers: Map<string, Offer[]>;
  lifecycles: Map<string, Lifecycle>;
  leftOut: LeftOut;
}

const inLane = (recordLane: RecordLane, lane: QueryLane) => lane === 'all' || recordLane === lane;

export function compute(data: SourceData): Computed {
  const sources = new Map(data.sources.map((s) => [s.id, s]));
  const isPublic = (r: { provenance: { source: string } }) =>
    sources.get(r.provenance.source)?.redistributable === true;
  const models = data.models.filter(isPublic);
  // Speed runs are read by index, in columns (speed-runs.ts): these are the public ones.
  const speed = data.speed;
  const publicRuns: number[] = [];
  for (let i = 0; i < speed.length; i++) if (sources.get(speed.source(i))?.redistributable === true) publicRuns.push(i);
  const benchmarks = data.benchmarks.filter(isPublic);
  const prices = data.prices.filter(isPublic);
  const publicSlugs = new Set(models.map((m) => m.slug));
  const sentinelOf: SentinelOf = (id) => sources.get(id)?.tokens_per_second_sentinel;

  const lanes = {} as Record<QueryLane, LaneView>;
  for (const lane of ['verified', 'provisional', 'all'] as const) {
    const sp = publicRuns.filter((i) => inLane(speed.lane(i), lane));
    const bm = benchmarks.filter((r) => inLane(r.lane, lane));
    const pr = prices.filter((r) => inLane(r.lane, lane));
    // A provisional view shows the models that have provisional records; `all` shows every public model.
    const withRecords = new Set<string>();
    for (const i of sp) withRecords.add(speed.model(i));
    for (const r of bm) withRecords.add(r.model);
    for (const r of pr) withRecords.add(r.model);
    const visible = models.filter((m) => inLane(m.lane, lane) || (lane === 'provisional' && withRecords.has(m.slug)));
    const visibleSet = new Set(visible.map((m) => m.slug));
    const { boards, placements } = buildLeaderboards(bm, data.metrics, visibleSet);
    const lastActivity = new Map<string, number>();
    const touch = (slug: string, t: number) => {
      if (t > (lastActivity.get(slug) ?? -Infinity)) lastActivity.set(slug, t);
    };
    for (const m of visible) touch(m.slug, instantMs(m.updated_at));
    for (const i of sp) if (visibleSet.has(speed.model(i))) touch(speed.model(i), speed.time(i));
    for (const r of bm) if (visibleSet.has(r.model)) touch(r.model, instantMs(r.eval_date));
    for (const r of pr) if (visibleSet.has(r.model)) touch(r.model, instantMs(r.observed_at));
    lanes[lane] = {
      lane,
      models: visible,
      stats: speedStats(
        speed,
        sentinelOf,
        sp.filter((i) => visibleSet.has(speed.model(i))),
      ),
      prices: priceSummaries(pr),
      boards,
      placements,
      lastActivity,
      provenance: provenanceOf(visible, { runs: speed, which: sp }, [bm, pr], sources),
    };
  }
  const overrides = new Map<string, DisplayOverride>();
  for (const o of data.overrides.filter(isPublic))
    overrides.set(o.model, {
      ...overrides.get(o.model),
      ...o,
      description: { ...overrides.get(o.model)?.description, ...o.description },
    });
  // Later stages read no measurement: the largest part of the data is not kept with the figures made of it.
  return {
    data: { ...data, speed: new SpeedRuns(), benchmarks: [], prices: [] },
    lanes,
    capabilities: new Map(models.map((m) => [m.slug, parseCapabilities(m.capabilities)])),
    overrides,
    history: priceHistories(
      data.priceHistory.filter((r) => isPublic(r) && publicSlugs.has(r.model)),
      data.offers.filter((o) => isPublic(o) && publicSlugs.has(o.model)),
      headlineOffers(prices),
    ),
    offers: offersByModel(data.offers.filter(isPublic), data.providers.filter(isPublic), publicSlugs),
    lifecycles: lifecycles(models),
    leftOut: {
      sentinelSpeedSamples: publicRuns.filter(
        (i) => publicSlugs.has(speed.model(i)) && isSentinel(speed, i, sentinelOf),
      ).length,
      resellerZeroPrices: prices.filter((o) => publicSlugs.has(o.model) && isResellerZero(o)).length,
    },
  };
}

/** Public provenance: per source, the licence, how many records the model's responses rest on and a digest of their evidence hashes. */
function provenanceOf(
  models: ModelEntry[],
  speed: { runs: SpeedRuns; which: readonly number[] },
  recordSets: { model: string; provenance: { source: string; evidence_sha256: string } }[][],
  sources: Map<string, Source>,
) {
  // model -> source -> evidence: a hash, or the index of a speed run, whose hash is read only when its model's turn comes
  const hashes = new Map<string, Map<string, (string | number)[]>>();
  const add = (model: string, source: string, evidence: string | number) => {
    let bySource = hashes.get(model);
    if (!bySource) hashes.set(model, (bySource = new Map()));
    const list = bySource.get(source) ?? [];
    list.push(evidence);
    bySource.set(source, list);
  };
  const visible = new Set(models.map((m) => m.slug));
  for (const m of models) add(m.slug, m.provenance.source, m.provenance.evidence_sha256);
  const { runs, which } = speed;
  for (const i of which) if (visible.has(runs.model(i))) add(runs.model(i), runs.source(i), i);
  for (const set of recordSets)
    for (const r of set) if (visible.has(r.model)) add(r.model, r.provenance.source, r.provenance.evidence_sha256);
  const out = new Map<string, PublicProvenanceEntry[]>();
  for (const [model, bySource] of hashes) {
    out.set(
      model,
      [...bySource.keys()].sort().map((id) => {
        const s = sources.get(id)!;
        const ev = bySource
          .get(id)!
          .map((e) => (typeof e === 'number' ? runs.evidenceSha256(e) : e))
          .sort();
        return {
          id,
          name: s.name,
          url: s.url,
          license: s.license,
          records: ev.length,
          evidence_digest: createHash('sha256').update(ev.join('\n')).digest('hex'),
        };
      }),
    );
  }
  return out;
}
