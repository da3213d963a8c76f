// Stage 4: the typed parts every response of a lane variant is made of: per model its list item and detail core per
// locale, its include sections, its search fields; per sort the model order. publication/assemble.ts turns them into
// bytes (the build's bodies.ts for every prebuilt body, the gateway for composed lists), so 100k+ combinations cost
// string concatenation, not re-serialization.
import {
  SORTS,
  type BenchmarkEntry,
  type BenchmarkGroup,
  type DetailCore,
  type DetailSections,
  type ItemSections,
  type ListItemCore,
  type QueryLane,
  type Sort,
} from '../schema/api.js';
import { LOCALES, type Locale } from '../schema/source.js';
import { foldText } from '../publication/assemble.js';
import { sha256Hex } from '../publication/integrity.js';
import type { ListFacets, SearchFields } from '../publication/files.js';
import { priceSince } from './compute/history.js';
import type { Computed } from './compute/index.js';
import { round } from './compute/numbers.js';
import { cardOf, pricingOf } from './compute/offers.js';
import { orderSlugs } from './compute/order.js';
import { type Leaderboard, nearby, nearbyRange, percentile, type Placement } from './compute/ranks.js';
import { NO_TESTS } from './compute/stats.js';
import { toInstant } from './validate.js';

const GROUP_ORDER = ['coding', 'reasoning', 'math', 'language', 'data', 'agentic', 'knowledge', 'efficiency'] as const;
const SUMMARY_FALLBACK = 3;

/** Per model and lane variant: the objects its responses are made of. */
export interface ModelParts {
  item: Record<Locale, ListItemCore>;
  detail: Record<Locale, DetailCore>;
  /** Each section is an object whose keys are spliced into the detail. */
  sections: DetailSections;
  /**
   * The same for list items, where `benchmarks` adds the display-ready groups and category scores but not the full
   * metric list with nearby models: that stays on the detail, and a page of 50 items stays small.
   */
  itemSections: ItemSections;
  search: SearchFields;
  /** What the list filters read that no list item shows (provider, status, exclude_snapshots). */
  facets: ListFacets;
}

export interface VariantParts {
  lane: QueryLane;
  displayOnly: boolean;
  orders: Record<Sort, string[]>;
  models: Record<string, ModelParts>;
}

/** The parts of a lane variant, one model at a time: a build holds no model's parts past its bodies (bodies.ts). */
export interface VariantRenderer {
  lane: QueryLane;
  displayOnly: boolean;
  /** The lane's models, in its order. */
  slugs: string[];
  orders: Record<Sort, string[]>;
  /** The developer of a model of the lane (not a display override). */
  developerOf(slug: string): string;
  model(slug: string): ModelParts;
  /**
   * A digest of everything model(slug) reads, but the code (parts-store.ts keys that): equal keys, equal parts. Of
   * each leaderboard it is on: the metric, the board's size, its place, and the rows nearby with the names they show
   * (compute/ranks.ts nearby), so a changed value gives new keys to the models whose rows or nearby rows it changes.
   */
  key(slug: string): string;
  /**
   * Whether a display override reaches a model's parts (its own, or the name of a model nearby on a board): when none
   * does, its parts in the display variant are those of the public one. Always false in a public variant.
   */
  overridden(slug: string): boolean;
}

/** Every model's parts at once (tests, and what a variant's bodies are assembled from). */
export function renderVariant(c: Computed, lane: QueryLane, displayOnly: boolean): VariantParts {
  const r = variantRenderer(c, lane, displayOnly);
  const models: Record<string, ModelParts> = {};
  for (const slug of r.slugs) models[slug] = r.model(slug);
  return { lane, displayOnly, orders: r.orders, models };
}

/**
 * A board's metric and size, and per row the stretch of rows around it (nearby) with their models' names, as digests:
 * what a model's key holds of a board (VariantRenderer.key). A lane's two variants share them: the names are the
 * models' own (a display override's name enters each key apart).
 */
export interface BoardDigest {
  metric: string;
  windows: string[];
}

function boardDigest(b: Leaderboard, nameOf: (slug: string) => string): BoardDigest {
  const rows = b.rows.map((r) => sha256Hex(JSON.stringify([r, nameOf(r.slug)])));
  const windows = b.rows.map((_, index) => sha256Hex(rows.slice(...nearbyRange({ board: b, index })).join()));
  return { metric: sha256Hex(JSON.stringify([b.metric, b.rows.length])), windows };
}

/** `boards`: the boards' digests, made as keys ask for them; a lane's two variants may share one (bodies.ts). */
export function variantRenderer(
  c: Computed,
  lane: QueryLane,
  displayOnly: boolean,
  boards = new Map<Leaderboard, BoardDigest>(),
): VariantRenderer {
  const view = c.lanes[lane];
  const site = c.data.site;
  const base = site.url.replace(/\/+$/, '');
  const bySlug = new Map(view.models.map((m) => [m.slug, m]));
  const ov = (slug: string) => (displayOnly ? c.overrides.get(slug) : undefined);
  const nameOf = (slug: string) => ov(slug)?.name ?? bySlug.get(slug)!.name;

  // Boards' group sizes, for category coverage.
  const available = new Map<string, number>();
  for (const b of view.boards.values()) available.set(b.metric.group, (available.get(b.metric.group) ?? 0) + 1);

  const model = (slug: string): ModelParts => {
    const m = bySlug.get(slug)!;
    const o = ov(m.slug);
    const stats = view.stats.get(m.slug) ?? NO_TESTS;
    const perf = {
      average_tokens_per_second: stats.average_tokens_per_second,
      average_first_token_latency: stats.average_first_token_latency,
    };
    const price = view.prices.get(m.slug) ?? null;
    const placements = view.placements.get(m.slug) ?? [];
    const entries = placements.map((p) => benchmarkEntry(p, nameOf));
    const headline = entries.filter((_, i) => placements[i]!.board.metric.headline);
    const summary = headline.length ? headline : entries.slice(0, SUMMARY_FALLBACK);
    const documentation_url = o && o.documentation_url !== undefined ? o.documentation_url : m.documentation_url;
    const hub_url = o && o.hub_url !== undefined ? o.hub_url : m.hub_url;
    const name = o?.name ?? m.name;
    const description = (l: Locale) => o?.description?.[l] ?? m.description[l];
    const common = (l: Locale): ListItemCore => ({
      id: m.id,
      slug: m.slug,
      name,
      service_url: `${base}/model/${m.slug}`,
      description: description(l),
      developer: m.developer,
      release_date: toInstant(m.release_date),
      context_window_tokens: m.context_window_tokens,
      max_output_tokens: m.max_output_tokens,
      documentation_url,
      hub_url,
      stats: { ...stats },
      performance_summary: perf,
    });
    const lifecycle = c.lifecycles.get(m.slug)!;
    const item = {} as ModelParts['item'];
    const detail = {} as ModelParts['detail'];
    for (const l of LOCALES) {
      item[l] = common(l);
      detail[l] = {
        ...common(l),
        pricing_summary: price && {
          input_price_per_million: price.input_price_per_million,
          output_price_per_million: price.output_price_per_million,
          blended_price_per_million: price.blended_price_per_million,
          updated_at: price.updated_at,
        },
        benchmark_count: entries.length,
        benchmark_summary: summary,
        provenance: { sources: view.provenance.get(m.slug) ?? [] },
        lifecycle,
      };
    }
    const groups = new Map<string, BenchmarkGroup>();
    for (const [i, p] of placements.entries()) {
      const e = entries[i]!;
      const g = groups.get(p.board.metric.benchmark) ?? {
        benchmark: p.board.metric.benchmark,
        group: p.board.metric.group,
        metrics: [],
      };
      g.metrics.push({
        metric_key: e.metric_key,
        label: e.label,
        value: e.value,
        unit: e.unit,
        rank: e.rank,
        ranked_count: e.ranked_count,
        variant: e.variant,
      });
      groups.set(p.board.metric.benchmark, g);
    }
    const category_performance = GROUP_ORDER.filter((g) => available.has(g)).map((g) => {
      const mine = placements.filter((p) => p.board.metric.group === g);
      const total = available.get(g)!;
      const scores = mine.map((p) => percentile(p.board.rows[p.index]!.rank, p.board.rows.length));
      return {
        group: g,
        metrics_available: total,
        metrics_covered: mine.length,
        coverage: round(mine.length / total, 4),
        score: scores.length ? round(scores.reduce((a, b) => a + b, 0) / scores.length, 2) : null,
      };
    });
    const benchmark_groups = [...groups.values()];
    const capabilities = { capabilities: c.capabilities.get(m.slug)! };
    const pricing = pricingOf(price ?? undefined, c.offers.get(m.slug) ?? [], priceSince(c.history.get(m.slug)));
    return {
      item,
      detail,
      sections: {
        benchmarks: { benchmarks: entries, benchmark_groups, category_performance },
        capabilities,
        pricing: { pricing },
      },
      itemSections: {
        benchmarks: { benchmark_groups, category_performance },
        capabilities,
        pricing: { pricing: cardOf(pricing) },
      },
      facets: {
        providers: [...new Set((c.offers.get(m.slug) ?? []).map((o) => o.provider))].sort(),
        status: lifecycle.status,
        aliases: lifecycle.aliases,
      },
      search: {
        name: foldText(name),
        slug: m.slug,
        text: Object.fromEntries(LOCALES.map((l) => [l, foldText(`${name}\n${m.slug}\n${description(l)}`)])) as Record<
          Locale,
          string
        >,
      },
    };
  };
  const orders = Object.fromEntries(SORTS.map((s) => [s, orderSlugs(view, s, nameOf)])) as Record<Sort, string[]>;
  const variant = JSON.stringify([lane, displayOnly, base, [...available]]);
  // Whether a display override's name shows in the rows near a placement (never in a public variant: ov() is none).
  const overrideNearby = (p: Placement) => displayOnly && nearby(p).some((n) => ov(n.slug)?.name !== undefined);
  // Of a board, model() reads its metric, its size, and the rows near a placement with the names they show (a display
  // override's, or the model's): a value that moves no rank gives new keys only to the models that show it.
  const placementKey = (p: Placement) => {
    let d = boards.get(p.board);
    if (d === undefined) boards.set(p.board, (d = boardDigest(p.board, (slug) => bySlug.get(slug)!.name)));
    return [d.metric, p.index, d.windows[p.index], overrideNearby(p) ? nearby(p).map((r) => nameOf(r.slug)) : null];
  };
  // Every input of model(), in the order it reads them.
  const key = (slug: string) =>
    sha256Hex(
      JSON.stringify([
        variant,
        bySlug.get(slug),
        ov(slug) ?? null,
        view.stats.get(slug) ?? null,
        view.prices.get(slug) ?? null,
        (view.placements.get(slug) ?? []).map(placementKey),
        view.provenance.get(slug) ?? null,
        c.lifecycles.get(slug) ?? null,
        c.capabilities.get(slug) ?? null,
        c.offers.get(slug) ?? null,
        c.history.get(slug) ?? null,
      ]),
    );
  return {
    lane,
    displayOnly,
    slugs: view.models.map((m) => m.slug),
    orders,
    developerOf: (slug) => bySlug.get(slug)!.developer,
    model,
    key,
    // model() reads the overrides through ov() alone: its own, and the names of the models nearby (nameOf()).
    overridden: (slug) => ov(slug) !== undefined || (view.placements.get(slug) ?? []).some(overrideNearby),
  };
}

function benchmarkEntry(p: Placement, nameOf: (slug: string) => string): BenchmarkEntry {
  const row = p.board.rows[p.index]!;
  const metric = p.board.metric;
  const date = toInstant(row.eval_date);
  return {
    metric_key: metric.key,
    label: metric.label,
    group: metric.group,
    value: row.value,
    unit: metric.unit,
    rank: row.rank,
    ranked_count: p.board.rows.length,
    higher_is_better: metric.higher_is_better,
    is_aggregate: metric.aggregate,
    eval_date: date,
    variant: row.variant,
    stderr: row.stderr,
    confidence: row.confidence,
    updated_at: date,
    nearby_models: nearby(p).map((n) => ({ slug: n.slug, name: nameOf(n.slug), value: n.value, rank: n.rank })),
  };
}
