import { describe, expect, it, beforeAll } from 'vitest';
import { loadAndValidate } from '../src/pipeline/build.js';
import { compute, type Computed } from '../src/pipeline/compute/index.js';
import { round } from '../src/pipeline/compute/numbers.js';
import { priceSummaries } from '../src/pipeline/compute/prices.js';
import { speedStats } from '../src/pipeline/compute/stats.js';
import { renderVariant } from '../src/pipeline/render.js';
import { LIMITS, type PriceObservation, type SpeedRun } from '../src/schema/source.js';
import { smallCatalog, withTemp, writeFixture } from './helpers/fixture.js';

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
    expect(c.lanes.all.stats.get('alpha')!.average_tokens_per_second).toBeCloseTo(53.333, 3);
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
      observed_at: '2025-01-01T00:00:00Z',
      provenance: prov,
    }));
    expect(priceSummaries(prices).get('m')).toMatchObject({
      input_price_per_million: LIMITS.usd_per_million_tokens,
      output_price_per_million: LIMITS.usd_per_million_tokens,
      blended_price_per_million: LIMITS.usd_per_million_tokens,
    });
  });
});
