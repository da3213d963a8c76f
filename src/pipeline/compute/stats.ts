// Speed statistics: plain means over the lane's test runs. Latency is published in milliseconds.
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

/** Runs grouped by model; the input order is the file order, so sums are deterministic. */
export function speedStats(runs: readonly SpeedRun[]): Map<string, SpeedStats> {
  const acc = new Map<string, { n: number; tps: number; ttft: number; last: string }>();
  for (const r of runs) {
    const a = acc.get(r.model) ?? { n: 0, tps: 0, ttft: 0, last: '' };
    a.n++;
    a.tps += r.tokens_per_second;
    a.ttft += r.first_token_latency_ms;
    const t = toInstant(r.measured_at);
    if (t > a.last) a.last = t;
    acc.set(r.model, a);
  }
  const out = new Map<string, SpeedStats>();
  for (const [model, a] of acc) {
    out.set(model, {
      total_tests: a.n,
      average_tokens_per_second: round(a.tps / a.n, 3),
      average_first_token_latency: round(a.ttft / a.n, 3),
      last_test_at: a.last,
    });
  }
  return out;
}
