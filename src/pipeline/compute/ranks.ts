// Leaderboards. Per (model, metric) one value is published: the newest eval_date wins, then the better value,
// then the smaller evidence hash (so the choice never depends on file order). Ranks follow the metric's direction;
// ties share a rank and the next rank skips (1, 2, 2, 4). ranked_count is the number of models with a value in the lane.
import type { BenchmarkResult, Metric } from '../../schema/source.js';

export interface BoardRow {
  slug: string;
  value: number;
  rank: number;
  eval_date: string;
  stderr: number | null;
  confidence: number;
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

export function buildLeaderboards(
  results: readonly BenchmarkResult[],
  metrics: readonly Metric[],
  visible: ReadonlySet<string>,
) {
  const byKey = new Map(metrics.map((m) => [m.key, m]));
  const chosen = new Map<string, Map<string, BenchmarkResult>>(); // metric -> model -> result
  for (const r of results) {
    if (!visible.has(r.model)) continue;
    const metric = byKey.get(r.metric);
    if (!metric) continue;
    let perModel = chosen.get(r.metric);
    if (!perModel) chosen.set(r.metric, (perModel = new Map()));
    const cur = perModel.get(r.model);
    if (!cur || preferred(r, cur, metric.higher_is_better)) perModel.set(r.model, r);
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

function preferred(a: BenchmarkResult, b: BenchmarkResult, higherIsBetter: boolean): boolean {
  if (a.eval_date !== b.eval_date) return a.eval_date > b.eval_date;
  if (a.value !== b.value) return higherIsBetter ? a.value > b.value : a.value < b.value;
  return a.provenance.evidence_sha256 < b.provenance.evidence_sha256;
}

/** The stretch of the leaderboard around a placement: up to NEARBY_RADIUS above and below, the model itself included. */
export function nearby(p: Placement): BoardRow[] {
  return p.board.rows.slice(Math.max(0, p.index - NEARBY_RADIUS), p.index + NEARBY_RADIUS + 1);
}

/** Leaderboard percentile: 100 for first place, 0 for last, 100 when alone. */
export function percentile(rank: number, count: number): number {
  return count <= 1 ? 100 : (100 * (count - rank)) / (count - 1);
}
