import { describe, expect, it, beforeAll } from 'vitest';
import { loadAndValidate } from '../src/pipeline/build.js';
import { parseCapabilities } from '../src/pipeline/compute/capabilities.js';
import { compute, type Computed } from '../src/pipeline/compute/index.js';
import { round } from '../src/pipeline/compute/numbers.js';
import { priceSummaries } from '../src/pipeline/compute/prices.js';
import { median, speedStats } from '../src/pipeline/compute/stats.js';
import { renderVariant, variantRenderer } from '../src/pipeline/render.js';
import { LIMITS, type PriceObservation, type SpeedRun } from '../src/schema/source.js';
import {
  DEFAULT_SOURCES,
  metric,
  model,
  prov,
  smallCatalog,
  withTemp,
  writeFixture,
  type FixtureSpec,
} from './helpers/fixture.js';

let c: Computed;
beforeAll(async () => {
  c = await withTemp(async (dir) => {
    await writeFixture(dir, smallCatalog());
    return compute(await loadAndValidate(dir));
  });
});

const board = (lane: 'verified' | 'provisional' | 'all', key: string) =>
  c.lanes[lane].boards.get(key)!.rows.map((r) => [r.slug, r.value, r.rank]);

describe('ranks', () => {
  it('ties share a rank and the next rank skips (1, 2, 2, 4), higher is better', () => {
    expect(board('all', 'code.pass')).toEqual([
      ['delta', 95, 1],
      ['alpha', 90, 2],
      ['beta', 80, 3],
      ['gamma', 80, 3],
    ]);
    expect(board('verified', 'code.pass')).toEqual([
      ['alpha', 90, 1],
      ['beta', 80, 2],
      ['gamma', 80, 2],
    ]);
  });
  it('ranks lower-is-better metrics ascending, and models without a value are not ranked', () => {
    expect(board('verified', 'cost.usd')).toEqual([
      ['beta', 1, 1],
      ['alpha', 3, 2],
    ]);
  });
  it('drops results from sources that may not be redistributed (gamma 99 comes from a NOASSERTION source)', () => {
    expect(c.lanes.verified.boards.get('code.pass')!.rows.find((r) => r.slug === 'gamma')!.value).toBe(80);
  });
  it('publishes nearby models within two places, the model itself included', () => {
    const parts = renderVariant(c, 'all', false);
    const entry = (
      parts.models.gamma!.sections.benchmarks.benchmarks as {
        metric_key: string;
        nearby_models: { slug: string; rank: number }[];
        rank: number;
        ranked_count: number;
      }[]
    )[0]!;
    expect(entry.rank).toBe(3);
    expect(entry.ranked_count).toBe(4);
    expect(entry.nearby_models.map((n) => [n.slug, n.rank])).toEqual([
      ['alpha', 2],
      ['beta', 3],
      ['gamma', 3],
    ]);
  });
});

describe('lanes', () => {
  it('verified shows verified models only; provisional shows models with provisional records; all shows every public model', () => {
    expect(c.lanes.verified.models.map((m) => m.slug)).toEqual(['alpha', 'beta', 'gamma']);
    expect(c.lanes.provisional.models.map((m) => m.slug)).toEqual(['alpha', 'delta']);
    expect(c.lanes.all.models.map((m) => m.slug)).toEqual(['alpha', 'beta', 'delta', 'gamma']);
  });
  it('computes speed stats per lane, with latency in milliseconds', () => {
    expect(c.lanes.verified.stats.get('alpha')).toEqual({
      total_tests: 2,
      average_tokens_per_second: 75,
      average_first_token_latency: 300,
      last_test_at: '2025-01-06T10:00:00.000Z',
    });
    expect(c.lanes.provisional.stats.get('alpha')!.total_tests).toBe(1);
    expect(c.lanes.all.stats.get('alpha')!.average_tokens_per_second).toBe(50); // the median of 100, 50 and 10
    expect(c.lanes.verified.stats.get('beta')).toBeUndefined();
  });
});

describe('prices', () => {
  it('takes the newest observations, averages those that share the time, and blends 3:1', () => {
    expect(c.lanes.verified.prices.get('alpha')).toEqual({
      input_price_per_million: 3,
      output_price_per_million: 8,
      blended_price_per_million: 4.25,
      updated_at: '2025-02-01T00:00:00.000Z',
      observations: 2,
      sources: ['lab'],
      offer: null, // the observations name no offer
    });
    expect(c.lanes.verified.prices.get('beta')!.blended_price_per_million).toBe(0.75);
    expect(c.lanes.verified.prices.get('gamma')).toBeUndefined();
  });
});

describe('render', () => {
  it('applies display-only overrides only to the display variant', () => {
    const pub = renderVariant(c, 'verified', false);
    const disp = renderVariant(c, 'verified', true);
    expect(pub.models.beta!.item.en.name).toBe('BETA');
    expect(disp.models.beta!.item.en.name).toBe('Beta Prime');
    expect(disp.models.beta!.item.en.description).toBe('Beta, as marketed.');
    expect(disp.models.beta!.item.zh.description).toBe('beta 是一个模型。'); // no zh override: the record's text
    expect(disp.orders.alphabetical).toEqual(['alpha', 'beta', 'gamma']);
  });
  it('a display variant shares the public parts of a model no override reaches (its own, or a nearby name)', async () => {
    const slugs = Array.from({ length: 12 }, (_, i) => `m${String(i).padStart(2, '0')}`);
    const spec: FixtureSpec = {
      models: slugs.map((s, i) => model(s, i + 1)),
      metrics: [metric('code.pass')],
      benchmarks: slugs.map((s, i) => ({
        model: s,
        metric: 'code.pass',
        lane: 'verified',
        value: 10 + i,
        stderr: null,
        confidence: 1,
        eval_date: '2025-01-10',
        provenance: prov(5_000 + i),
      })),
      overrides: [
        { model: 'm06', reason: 'launch name', name: 'M Six', provenance: prov(5_100) },
        { model: 'm10', reason: 'as marketed', description: { en: 'M Ten, as marketed.' }, provenance: prov(5_101) },
      ],
    };
    const big = await withTemp(async (dir) => {
      await writeFixture(dir, spec);
      return compute(await loadAndValidate(dir));
    });
    const pub = variantRenderer(big, 'verified', false);
    const display = variantRenderer(big, 'verified', true);
    const reached = slugs.filter((s) => display.overridden(s));
    // m06 itself, and the models within two places of it on the board, whose nearby_models name it; m10 alone, whose
    // override leaves its name as it is.
    expect(reached).toEqual(['m04', 'm05', 'm06', 'm07', 'm08', 'm10']);
    expect(slugs.filter((s) => pub.overridden(s))).toEqual([]);
    for (const s of slugs) {
      if (reached.includes(s)) expect(display.model(s)).not.toEqual(pub.model(s));
      else expect(display.model(s)).toEqual(pub.model(s));
    }
  });
  it('orders lists: popular by providers then release, newest by release date', () => {
    const v = renderVariant(c, 'verified', false);
    expect(v.orders.popular).toEqual(['alpha', 'beta', 'gamma']);
    expect(v.orders.newest).toEqual(['beta', 'alpha', 'gamma']);
    expect(v.orders.recent[0]).toBe('alpha'); // its price observation of 2025-02-01 is the newest activity
  });
  it('summarises headline metrics and scores category performance by leaderboard percentile', () => {
    const v = renderVariant(c, 'verified', false);
    const d = v.models.alpha!.detail.en as { benchmark_count: number; benchmark_summary: { metric_key: string }[] };
    expect(d.benchmark_count).toBe(2);
    expect(d.benchmark_summary.map((e) => e.metric_key)).toEqual(['code.pass']);
    const cp = v.models.alpha!.sections.benchmarks.category_performance;
    expect(cp).toEqual([
      { group: 'coding', metrics_available: 1, metrics_covered: 1, coverage: 1, score: 100 },
      { group: 'efficiency', metrics_available: 1, metrics_covered: 1, coverage: 1, score: 0 },
    ]);
    expect(v.models.gamma!.item.en.stats).toEqual({
      total_tests: 0,
      average_tokens_per_second: null,
      average_first_token_latency: null,
      last_test_at: null,
    });
  });
  it('parses capabilities into filterable keys', () => {
    expect(c.capabilities.get('alpha')!.keys).toEqual(['input:text', 'output:text', 'temperature', 'tool_use']);
  });
  it('publishes a flag the source leaves unknown as null, not false, and not as a key', () => {
    const known = c.capabilities.get('alpha')!;
    const unknown = parseCapabilities({
      input: ['text'],
      output: ['text'],
      reasoning: false,
      tool_call: true,
      structured_output: null,
      attachment: false,
      temperature: null,
      open_weights: false,
      knowledge_cutoff: null,
    });
    expect(known.temperature).toBe(true);
    expect(unknown.temperature).toBeNull();
    expect(unknown.structured_output).toBeNull();
    expect(unknown.keys).toEqual(['input:text', 'output:text', 'tool_use']);
  });
});

describe('numbers', () => {
  it('round() removes float noise and never turns a finite number into Infinity (JSON null)', () => {
    expect(round(0.1 + 0.2, 6)).toBe(0.3);
    expect(round(-2.5, 0)).toBe(-3); // half away from zero
    expect(round(1e12 + 0.1234567, 3)).toBe(1000000000000.123);
    for (const x of [1.7e308, -1e308, Number.MAX_VALUE, 2 ** 53, 2 ** 60 + 2 ** 8]) {
      for (const digits of [0, 2, 3, 4, 6]) expect(round(x, digits), `round(${x}, ${digits})`).toBe(x);
    }
  });
  it('speed and price numbers at the validation bounds stay finite through sums, means and blending', () => {
    const prov = { source: 'lab', evidence_sha256: '0'.repeat(64) };
    const runs: SpeedRun[] = Array.from({ length: 1000 }, () => ({
      model: 'm',
      lane: 'verified',
      tokens_per_second: LIMITS.tokens_per_second,
      first_token_latency_ms: LIMITS.first_token_latency_ms,
      measured_at: '2025-01-01T00:00:00Z',
      provenance: prov,
    }));
    expect(speedStats(runs).get('m')).toMatchObject({
      average_tokens_per_second: LIMITS.tokens_per_second,
      average_first_token_latency: LIMITS.first_token_latency_ms,
    });
    const prices: PriceObservation[] = Array.from({ length: 1000 }, () => ({
      model: 'm',
      lane: 'verified',
      input_per_million: LIMITS.usd_per_million_tokens,
      output_per_million: LIMITS.usd_per_million_tokens,
      first_party: true,
      observed_at: '2025-01-01T00:00:00Z',
      offer: null,
      provenance: prov,
    }));
    expect(priceSummaries(prices).get('m')).toMatchObject({
      input_price_per_million: LIMITS.usd_per_million_tokens,
      output_price_per_million: LIMITS.usd_per_million_tokens,
      blended_price_per_million: LIMITS.usd_per_million_tokens,
    });
  });
});

/** One benchmark value of a run; `run` null: a source that reports a single run. */
const value = (
  slug: string,
  key: string,
  v: number,
  date: string,
  run: { id: string; variant: string } | null,
  n: number,
  lane = 'verified',
) => ({
  model: slug,
  metric: key,
  lane,
  value: v,
  stderr: null,
  confidence: 1,
  eval_date: date,
  ...(run ? { run: { ...run, settings: { reasoning_effort: run.id } } } : {}),
  provenance: prov(n),
});

// Aider's gpt-5 on the Polyglot: the best pass rate is the oldest run, the cheapest and quickest the newest ones.
const HIGH = { id: 'high', variant: 'reasoning effort high, diff edit format' };
const MEDIUM = { id: 'medium', variant: 'reasoning effort medium, diff edit format' };
const LOW = { id: 'low', variant: 'reasoning effort low, diff edit format' };
function runsCatalog(): FixtureSpec {
  const group = { run_group: 'polyglot' };
  return {
    models: [model('gpt', 1), model('rival', 2), model('solo', 3)],
    metrics: [
      metric('polyglot.pass', { ...group, decides_run: true }),
      metric('polyglot.cost', { ...group, higher_is_better: false, unit: 'usd', headline: false }),
      metric('polyglot.seconds', { ...group, higher_is_better: false, unit: 'seconds', headline: false }),
      metric('suite.a', { run_group: 'suite', headline: false }),
      metric('suite.b', { run_group: 'suite', headline: false }),
      metric('single.pass', { headline: false }),
    ],
    benchmarks: [
      value('gpt', 'polyglot.pass', 88, '2025-08-23', HIGH, 1),
      value('gpt', 'polyglot.cost', 29.08, '2025-08-23', HIGH, 2),
      value('gpt', 'polyglot.seconds', 194, '2025-08-23', HIGH, 3),
      value('gpt', 'polyglot.pass', 86.7, '2025-08-25', MEDIUM, 4),
      value('gpt', 'polyglot.cost', 17.69, '2025-08-25', MEDIUM, 5),
      value('gpt', 'polyglot.seconds', 118.7, '2025-08-25', MEDIUM, 6),
      value('gpt', 'polyglot.pass', 81.3, '2025-08-25', LOW, 7),
      value('gpt', 'polyglot.cost', 10.37, '2025-08-25', LOW, 8),
      value('gpt', 'polyglot.seconds', 62.4, '2025-08-25', LOW, 9),
      value('rival', 'polyglot.pass', 87, '2025-07-01', { id: 'only', variant: 'whole edit format' }, 10),
      value('rival', 'polyglot.cost', 12, '2025-07-01', { id: 'only', variant: 'whole edit format' }, 11),
      value('rival', 'polyglot.seconds', 100, '2025-07-01', { id: 'only', variant: 'whole edit format' }, 12),
      // No metric decides the suite's runs: the newest is published, both of its values.
      value('gpt', 'suite.a', 90, '2025-01-01', { id: 'old', variant: 'old' }, 13),
      value('gpt', 'suite.b', 10, '2025-01-01', { id: 'old', variant: 'old' }, 14),
      value('gpt', 'suite.a', 50, '2025-02-01', { id: 'new', variant: 'new' }, 15),
      value('gpt', 'suite.b', 60, '2025-02-01', { id: 'new', variant: 'new' }, 16),
      // Two runs with the same best value: the newer wins. No run id: a run is its source and date.
      value('solo', 'single.pass', 70, '2025-03-01', null, 17),
      value('solo', 'single.pass', 70, '2025-04-01', null, 18),
      value('gpt', 'single.pass', 75, '2025-01-01', null, 19),
    ],
  };
}

describe('runs: every published value of a run group comes from one run', () => {
  let r: Computed;
  beforeAll(async () => {
    r = await withTemp(async (dir) => {
      await writeFixture(dir, runsCatalog());
      return compute(await loadAndValidate(dir));
    });
  });
  type Entry = { metric_key: string; value: number; variant: string | null; rank: number; ranked_count: number };
  const board = (key: string) => r.lanes.verified.boards.get(key)!.rows.map((x) => [x.slug, x.value, x.rank]);
  const entries = (slug: string) =>
    renderVariant(r, 'verified', false).models[slug]!.sections.benchmarks.benchmarks as Entry[];

  it('two runs whose metrics cross: the row is the run with the best deciding metric, whole, with its label', () => {
    // The rule "newest, then better, per metric" gave pass 86.7 (medium), cost 10.37 and 62.4 s (low): no run's.
    const polyglot = entries('gpt').filter((e) => e.metric_key.startsWith('polyglot.'));
    expect(polyglot.map((e) => [e.metric_key, e.value, e.variant])).toEqual([
      ['polyglot.pass', 88, HIGH.variant],
      ['polyglot.cost', 29.08, HIGH.variant],
      ['polyglot.seconds', 194, HIGH.variant],
    ]);
  });
  it('ranks, ranked_count and nearby models are computed over the chosen runs only', () => {
    expect(board('polyglot.cost')).toEqual([
      ['rival', 12, 1],
      ['gpt', 29.08, 2],
    ]);
    const cost = entries('gpt').find((e) => e.metric_key === 'polyglot.cost')!;
    expect([cost.rank, cost.ranked_count]).toEqual([2, 2]);
    const detail = renderVariant(r, 'verified', false).models.gpt!.detail.en as {
      benchmark_summary: (Entry & { nearby_models: { slug: string; value: number }[] })[];
    };
    expect(detail.benchmark_summary.map((e) => [e.metric_key, e.value, e.variant])).toEqual([
      ['polyglot.pass', 88, HIGH.variant],
    ]);
    expect(detail.benchmark_summary[0]!.nearby_models.map((n) => [n.slug, n.value])).toEqual([
      ['gpt', 88],
      ['rival', 87],
    ]);
  });
  it('groups carry the variant of each value', () => {
    const groups = renderVariant(r, 'verified', false).models.gpt!.itemSections.benchmarks.benchmark_groups as {
      benchmark: string;
      metrics: { metric_key: string; variant: string | null }[];
    }[];
    expect(groups.find((g) => g.benchmark === 'polyglot')!.metrics.map((m) => m.variant)).toEqual([
      HIGH.variant,
      HIGH.variant,
      HIGH.variant,
    ]);
  });
  it('a run group without a deciding metric publishes its newest run, whole', () => {
    const suite = entries('gpt').filter((e) => e.metric_key.startsWith('suite.'));
    expect(suite.map((e) => [e.metric_key, e.value, e.variant])).toEqual([
      ['suite.a', 50, 'new'],
      ['suite.b', 60, 'new'],
    ]);
  });
  it('ties on the deciding metric go to the newest run; a source without run ids gets variant null', () => {
    const row = r.lanes.verified.boards.get('single.pass')!.rows.find((x) => x.slug === 'solo')!;
    expect([row.value, row.eval_date, row.variant]).toEqual([70, '2025-04-01', null]);
  });
});

describe('speed samples at a source sentinel, and reseller 0/0 prices', () => {
  const sample = (slug: string, tps: number, ms: number, n: number, source = 'probe') => ({
    model: slug,
    lane: 'verified',
    tokens_per_second: tps,
    first_token_latency_ms: ms,
    measured_at: `2024-04-${10 + n}T10:00:00Z`,
    provenance: prov(n, source),
  });
  const spec = (): FixtureSpec => ({
    sources: [
      ...DEFAULT_SOURCES,
      {
        id: 'probe',
        name: 'Probe',
        url: 'https://example.org/probe',
        license: 'MIT',
        redistributable: true,
        tokens_per_second_sentinel: 999,
      },
    ],
    models: [model('fast', 1), model('free', 2), model('paid', 3)],
    speed: [
      sample('fast', 100, 300, 1),
      sample('fast', 60, 500, 2),
      sample('fast', 999, 900, 3), // "not measured": a test, and a latency, but no speed
      sample('fast', 80, 400, 4),
      sample('paid', 999, 200, 5, 'lab'), // lab declares no sentinel: 999 is a measurement there
    ],
    prices: [
      {
        model: 'free',
        lane: 'verified',
        input_per_million: 0,
        output_per_million: 0,
        first_party: false,
        observed_at: '2024-01-01T00:00:00Z',
        provenance: prov(20),
      },
      {
        model: 'paid',
        lane: 'verified',
        input_per_million: 0,
        output_per_million: 0,
        observed_at: '2024-01-01T00:00:00Z',
        provenance: prov(21),
      },
    ],
  });
  let r: Computed;
  beforeAll(async () => {
    r = await withTemp(async (dir) => {
      await writeFixture(dir, spec());
      return compute(await loadAndValidate(dir));
    });
  });
  it('a sentinel sample counts as a test and its latency is used, but its tokens/s is left out', () => {
    expect(r.lanes.verified.stats.get('fast')).toEqual({
      total_tests: 4,
      average_tokens_per_second: 80, // median of 100, 60, 80 (999 left out; the mean with it was 309.75)
      average_first_token_latency: 450, // median of 300, 500, 900, 400
      last_test_at: '2024-04-14T10:00:00.000Z',
    });
    expect(r.lanes.verified.stats.get('paid')!.average_tokens_per_second).toBe(999);
    expect(r.leftOut.sentinelSpeedSamples).toBe(1);
  });
  it('a model whose only samples are sentinels has tests but a null tokens/s average', () => {
    const runs = spec().speed!.slice(2, 3) as unknown as SpeedRun[];
    expect(speedStats(runs, (s) => (s === 'probe' ? 999 : undefined)).get('fast')).toMatchObject({
      total_tests: 1,
      average_tokens_per_second: null,
      average_first_token_latency: 900,
    });
  });
  it("a reseller's 0/0 listing is published as no price; a developer's own 0/0 is a price", () => {
    expect(r.lanes.verified.prices.get('free')).toBeUndefined();
    expect(renderVariant(r, 'verified', false).models.free!.detail.en.pricing_summary).toBeNull();
    expect(r.lanes.verified.prices.get('paid')!.blended_price_per_million).toBe(0);
    expect(r.leftOut.resellerZeroPrices).toBe(1);
  });
  it('median: the middle value, or the mean of the middle two', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});
