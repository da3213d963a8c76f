// Speed statistics per model: medians over the lane's test runs. Latency is published in milliseconds.
// A median, not a mean: the samples pool providers, regions and days (thefastest.ai's Mixtral runs range from 6 to
// 962 tokens/s), and a handful of fast or stalled requests would otherwise move the published figure.
// A source's sentinel (sources.yaml `tokens_per_second_sentinel`) marks a run whose speed it could not measure: the
// run counts as a test and its first-token latency is used, but its tokens/s is left out.
import type { SpeedRun } from '../../schema/source.js';
import { round } from './numbers.js';
import type { Stats } from '../../schema/api.js';
import { SpeedRuns } from '../speed-runs.js';

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

/** Whether the i-th run carries its source's tokens-per-second sentinel. */
export const isSentinel = (runs: SpeedRuns, i: number, sentinelOf: SentinelOf): boolean =>
  runs.tokensPerSecond(i) === sentinelOf(runs.source(i));

/** The median of a non-empty list (the mean of the middle two for an even count); sorts `xs` in place. */
export function median(xs: number[]): number {
  xs.sort((a, b) => a - b);
  const mid = xs.length >> 1;
  return xs.length % 2 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
}

/** Per model, the stats of the runs `which` (their indexes, ascending; by default every run). */
export function speedStats(
  runs: SpeedRuns | readonly SpeedRun[],
  sentinelOf: SentinelOf = () => undefined,
  which?: readonly number[],
) {
  const set = runs instanceof SpeedRuns ? runs : SpeedRuns.of(runs);
  const acc = new Map<string, { n: number; tps: number[]; ttft: number[]; last: number }>();
  const count = which?.length ?? set.length;
  for (let k = 0; k < count; k++) {
    const i = which ? which[k]! : k;
    const model = set.model(i);
    let a = acc.get(model);
    if (!a) acc.set(model, (a = { n: 0, tps: [], ttft: [], last: -Infinity }));
    a.n++;
    if (!isSentinel(set, i, sentinelOf)) a.tps.push(set.tokensPerSecond(i));
    a.ttft.push(set.firstTokenLatencyMs(i));
    a.last = Math.max(a.last, set.time(i));
  }
  const out = new Map<string, SpeedStats>();
  for (const [model, a] of acc) {
    out.set(model, {
      total_tests: a.n,
      average_tokens_per_second: a.tps.length ? round(median(a.tps), 3) : null,
      average_first_token_latency: round(median(a.ttft), 3),
      last_test_at: new Date(a.last).toISOString(),
    });
  }
  return out;
}
