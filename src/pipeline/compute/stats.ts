// Speed statistics per model: medians over the lane's test runs. Latency is published in milliseconds.
// A median, not a mean: the samples pool providers, regions and days (thefastest.ai's Mixtral runs range from 6 to
// 962 tokens/s), and a handful of fast or stalled requests would otherwise move the published figure.
// A source's sentinel (sources.yaml `tokens_per_second_sentinel`) marks a run whose speed it could not measure: the
// run counts as a test and its first-token latency is used, but its tokens/s is left out.
import type { SpeedRun } from '../../schema/source.js';
import { round } from './numbers.js';
import { toInstant } from '../validate.js';
import type { Stats } from '../../schema/api.js';

/** The published stats object (src/schema/api.ts). */
export type SpeedStats = Stats;

export const NO_TESTS: SpeedStats = {
  total_tests: 0,
  average_tokens_per_second: null,
  average_first_token_latency: null,
  last_test_at: null,
};

/** The source's "not measured" value of tokens per second, if it declares one. */
export type SentinelOf = (source: string) => number | undefined;

/** Whether a run carries its source's tokens-per-second sentinel. */
export const isSentinel = (r: SpeedRun, sentinelOf: SentinelOf): boolean =>
  r.tokens_per_second === sentinelOf(r.provenance.source);

/** The median of a non-empty list (the mean of the middle two for an even count); sorts `xs` in place. */
export function median(xs: number[]): number {
  xs.sort((a, b) => a - b);
  const mid = xs.length >> 1;
  return xs.length % 2 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
}

export function speedStats(runs: readonly SpeedRun[], sentinelOf: SentinelOf = () => undefined) {
  const acc = new Map<string, { n: number; tps: number[]; ttft: number[]; last: string }>();
  for (const r of runs) {
    let a = acc.get(r.model);
    if (!a) acc.set(r.model, (a = { n: 0, tps: [], ttft: [], last: '' }));
    a.n++;
    if (!isSentinel(r, sentinelOf)) a.tps.push(r.tokens_per_second);
    a.ttft.push(r.first_token_latency_ms);
    const t = toInstant(r.measured_at);
    if (t > a.last) a.last = t;
  }
  const out = new Map<string, SpeedStats>();
  for (const [model, a] of acc) {
    out.set(model, {
      total_tests: a.n,
      average_tokens_per_second: a.tps.length ? round(median(a.tps), 3) : null,
      average_first_token_latency: round(median(a.ttft), 3),
      last_test_at: a.last,
    });
  }
  return out;
}
