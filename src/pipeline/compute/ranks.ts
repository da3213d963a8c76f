// Leaderboards. A source may report several runs of a model on one benchmark (Aider ran gpt-5 at three reasoning
// efforts); each published row is one run's, whole. Per model and run group (metrics.yaml `run_group`, by default
// each metric alone) one run is chosen:
//   1. runs that report the group's deciding metric (`decides_run`, or the group's only metric) first, the best
//      value of it first, in the metric's direction;
//   2. then the newest eval_date;
//   3. then the smaller run key (source and run id), so the choice never depends on file order.
// Every metric of the group is published from the chosen run, and from no other. A run is the results of one model
// that share source and `run.id`, or, without a run id, source and eval_date.
// Ranks follow the metric's direction; ties share a rank and the next rank skips (1, 2, 2, 4). ranked_count is the
// number of models with a value in the lane.
import type { BenchmarkResult, Metric } from '../../schema/source.js';

export interface BoardRow {
  slug: string;
  value: number;
  rank: number;
  eval_date: string;
  stderr: number | null;
  confidence: number;
  variant: string | null;
}
export interface Leaderboard {
  metric: Metric;
  rows: BoardRow[];
}
/** A model's place on one leaderboard. */
export interface Placement {
  board: Leaderboard;
  index: number;
}

export const NEARBY_RADIUS = 2;

export const runGroupOf = (m: Metric): string => m.run_group ?? m.key;

/** The run a result belongs to, within its model: results with the same key are one run. */
export const runKeyOf = (r: BenchmarkResult): string =>
  `${r.provenance.source}\u0000${r.run ? `id:${r.run.id}` : `date:${r.eval_date}`}`;

/** Per run group, the metric that decides the run: the flagged one, or the group's only metric. */
export function deciders(metrics: readonly Metric[]): Map<string, Metric> {
  const members = new Map<string, Metric[]>();
  for (const m of metrics) {
    const g = runGroupOf(m);
    members.set(g, [...(members.get(g) ?? []), m]);
  }
  const out = new Map<string, Metric>();
  for (const [g, ms] of members) {
    const decider = ms.find((m) => m.decides_run) ?? (ms.length === 1 ? ms[0] : undefined);
    if (decider) out.set(g, decider);
  }
  return out;
}

interface Run {
  key: string;
  date: string;
  results: Map<string, BenchmarkResult>; // metric key -> result
}

export function buildLeaderboards(
  results: readonly BenchmarkResult[],
  metrics: readonly Metric[],
  visible: ReadonlySet<string>,
) {
  const byKey = new Map(metrics.map((m) => [m.key, m]));
  const decider = deciders(metrics);
  const units = new Map<string, { group: string; runs: Map<string, Run> }>(); // by model + run group
  for (const r of results) {
    if (!visible.has(r.model)) continue;
    const metric = byKey.get(r.metric);
    if (!metric) continue;
    const group = runGroupOf(metric);
    const unitKey = `${r.model}\u0000${group}`;
    let unit = units.get(unitKey);
    if (!unit) units.set(unitKey, (unit = { group, runs: new Map() }));
    const runs = unit.runs;
    const key = runKeyOf(r);
    let run = runs.get(key);
    if (!run) runs.set(key, (run = { key, date: r.eval_date, results: new Map() }));
    if (r.eval_date > run.date) run.date = r.eval_date;
    // Validation refuses two values of one metric in one run; should one get here, the choice stays deterministic.
    const cur = run.results.get(r.metric);
    if (!cur || r.provenance.evidence_sha256 < cur.provenance.evidence_sha256) run.results.set(r.metric, r);
  }
  const chosen = new Map<string, Map<string, BenchmarkResult>>(); // metric -> model -> result
  for (const { group, runs } of units.values()) {
    const best = [...runs.values()].reduce((a, b) => (preferred(b, a, decider.get(group)) ? b : a));
    for (const [metricKey, r] of best.results) {
      let perModel = chosen.get(metricKey);
      if (!perModel) chosen.set(metricKey, (perModel = new Map()));
      perModel.set(r.model, r);
    }
  }
  const boards = new Map<string, Leaderboard>();
  const placements = new Map<string, Placement[]>();
  for (const metric of metrics) {
    const perModel = chosen.get(metric.key);
    if (!perModel) continue;
    const dir = metric.higher_is_better ? -1 : 1;
    const rows: BoardRow[] = [...perModel.values()]
      .map((r) => ({
        slug: r.model,
        value: r.value,
        rank: 0,
        eval_date: r.eval_date,
        stderr: r.stderr,
        confidence: r.confidence,
        variant: r.run?.variant ?? null,
      }))
      .sort((a, b) => dir * (a.value - b.value) || (a.slug < b.slug ? -1 : 1));
    rows.forEach((row, i) => {
      row.rank = i > 0 && rows[i - 1]!.value === row.value ? rows[i - 1]!.rank : i + 1;
    });
    const board = { metric, rows };
    boards.set(metric.key, board);
    rows.forEach((row, index) => {
      let list = placements.get(row.slug);
      if (!list) placements.set(row.slug, (list = []));
      list.push({ board, index });
    });
  }
  return { boards, placements };
}

/** Whether run `a` is to be published rather than run `b` (the rule at the top of this file). */
function preferred(a: Run, b: Run, decider: Metric | undefined): boolean {
  if (decider) {
    const va = a.results.get(decider.key)?.value;
    const vb = b.results.get(decider.key)?.value;
    if ((va === undefined) !== (vb === undefined)) return va !== undefined;
    if (va !== undefined && vb !== undefined && va !== vb) return decider.higher_is_better ? va > vb : va < vb;
  }
  if (a.date !== b.date) return a.date > b.date;
  return a.key < b.key;
}

/** Where the stretch of the leaderboard around a placement starts and ends in its rows (nearby). */
export const nearbyRange = (p: Placement): [number, number] => [
  Math.max(0, p.index - NEARBY_RADIUS),
  p.index + NEARBY_RADIUS + 1,
];

/** The stretch of the leaderboard around a placement: up to NEARBY_RADIUS above and below, the model itself included. */
export function nearby(p: Placement): BoardRow[] {
  return p.board.rows.slice(...nearbyRange(p));
}

/** Leaderboard percentile: 100 for first place, 0 for last, 100 when alone. */
export function percentile(rank: number, count: number): number {
  return count <= 1 ? 100 : (100 * (count - rank)) / (count - 1);
}
