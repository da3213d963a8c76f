// The semantic diff of two snapshots (pipeline/snapshot.ts): per model added, removed or changed, and for a change
// each field with its old and new value; then the catalog. Each change is reported once: a figure that changed
// alike in several lanes is one change naming those lanes, a leaderboard's ranked_count is a catalog change (not
// repeated on every model it ranks), and derived values (blended price, capability keys) are not in the snapshot.
import { QUERY_LANES, type FieldChange, type ModelChange, type QueryLane, type SemanticDiff } from '../schema/api.js';
import type { SnapshotContent, SnapshotModel } from '../schema/snapshot.js';
import { canonicalJson } from './snapshot.js';

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
// An offer's key is bracketed (`[groq/openai/gpt-oss-120b]`): it follows its parent without a dot, and the dots and
// slashes of a provider model id stay inside the brackets.
const join = (path: string, key: string) => (path && !key.startsWith('[') ? `${path}.${key}` : `${path}${key}`);
/** A value with its object keys in canonical order: a change reads the same whichever snapshot it came from. */
const canonical = (v: unknown): unknown => (v !== null && typeof v === 'object' ? JSON.parse(canonicalJson(v)) : v);

/** Every leaf that differs between a and b (undefined: absent), objects walked key by key, arrays compared whole. */
function leafChanges(a: unknown, b: unknown, path: string, out: FieldChange[]): void {
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(byCodePoint);
    for (const k of keys) leafChanges(a[k], b[k], join(path, k), out);
    return;
  }
  if (a === undefined && b === undefined) return;
  if (a !== undefined && b !== undefined && canonicalJson(a) === canonicalJson(b)) return;
  const change: FieldChange = { path };
  if (a !== undefined) change.old = canonical(a);
  if (b !== undefined) change.new = canonical(b);
  out.push(change);
}

/**
 * The changes of values kept per lane, each distinct change once with the lanes it happened in. `perLane` gives a
 * lane's old and new value, or null when the lane is not compared (the model is not visible in it on both sides).
 */
function laneChanges(perLane: (lane: QueryLane) => [unknown, unknown] | null, prefix: string): FieldChange[] {
  const merged = new Map<string, FieldChange & { lanes: QueryLane[] }>();
  for (const lane of QUERY_LANES) {
    const pair = perLane(lane);
    if (!pair) continue;
    const found: FieldChange[] = [];
    leafChanges(pair[0], pair[1], prefix, found);
    for (const f of found) {
      const key = `${f.path}\n${canonicalJson(f.old ?? null)}${'old' in f}\n${canonicalJson(f.new ?? null)}${'new' in f}`;
      const seen = merged.get(key);
      if (seen) seen.lanes.push(lane);
      else merged.set(key, { ...f, lanes: [lane] });
    }
  }
  return [...merged.values()];
}

const laneOrder = (lanes: readonly QueryLane[] | undefined) => (lanes ? QUERY_LANES.indexOf(lanes[0]!) : -1);
const sortFields = (fields: FieldChange[]) =>
  fields.sort((a, b) => byCodePoint(a.path, b.path) || laneOrder(a.lanes) - laneOrder(b.lanes));

const visibleIn = (m: SnapshotModel): QueryLane[] => QUERY_LANES.filter((l) => m.lanes[l] !== undefined);

function modelFields(a: SnapshotModel, b: SnapshotModel): FieldChange[] {
  const { lanes: laneA, ...restA } = a;
  const { lanes: laneB, ...restB } = b;
  const fields: FieldChange[] = [];
  leafChanges(restA, restB, '', fields);
  const [inA, inB] = [visibleIn(a), visibleIn(b)];
  if (inA.join() !== inB.join()) fields.push({ path: 'lanes', old: inA, new: inB });
  // A lane the model enters or leaves is told by `lanes` above: its figures there are all new, or all gone.
  fields.push(...laneChanges((l) => (laneA[l] && laneB[l] ? [laneA[l], laneB[l]] : null), ''));
  return sortFields(fields);
}

/** What changed from `before` to `after`: models in slug order, each once; catalog changes in path order. */
export function diffSnapshots(before: SnapshotContent, after: SnapshotContent): SemanticDiff {
  const slugs = [...new Set([...Object.keys(before.models), ...Object.keys(after.models)])].sort(byCodePoint);
  const models: ModelChange[] = [];
  for (const slug of slugs) {
    const [a, b] = [before.models[slug], after.models[slug]];
    if (!a) models.push({ slug, name: b!.name, change: 'added', fields: [] });
    else if (!b) models.push({ slug, name: a.name, change: 'removed', fields: [] });
    else {
      const fields = modelFields(a, b);
      if (fields.length) models.push({ slug, name: b.name, change: 'changed', fields });
    }
  }
  const catalog: FieldChange[] = [];
  const { leaderboards: boardsA, ...restA } = before.catalog;
  const { leaderboards: boardsB, ...restB } = after.catalog;
  leafChanges(restA, restB, '', catalog);
  catalog.push(...laneChanges((l) => [boardsA[l], boardsB[l]], 'leaderboards'));
  return { models, catalog: sortFields(catalog) };
}

export const isEmptyDiff = (d: SemanticDiff): boolean => d.models.length === 0 && d.catalog.length === 0;

// ---- for a person ---------------------------------------------------------------------------------------------

const MODELS_IN_SUMMARY = 5;
const FIELDS_IN_SUMMARY = 3;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Distinct paths, in order (a path changed differently in two lanes is one path here). */
const pathsOf = (fields: readonly FieldChange[]) => [...new Set(fields.map((f) => f.path))];

function listed<T>(items: readonly T[], max: number, show: (t: T) => string): string {
  const shown = items.slice(0, max).map(show).join(', ');
  return items.length > max ? `${shown}, … ${items.length - max} more` : shown;
}

/** One line: `1 model changed: gpt-4o (description.en)`; `no changes` when there are none. */
export function summaryLine(d: SemanticDiff): string {
  const parts: string[] = [];
  for (const kind of ['added', 'removed', 'changed'] as const) {
    const ms = d.models.filter((m) => m.change === kind);
    if (!ms.length) continue;
    parts.push(
      `${plural(ms.length, 'model')} ${kind}: ${listed(ms, MODELS_IN_SUMMARY, (m) =>
        kind === 'changed' ? `${m.slug} (${listed(pathsOf(m.fields), FIELDS_IN_SUMMARY, (p) => p)})` : m.slug,
      )}`,
    );
  }
  if (d.catalog.length)
    parts.push(
      `${plural(d.catalog.length, 'catalog change')}: ${listed(pathsOf(d.catalog), FIELDS_IN_SUMMARY, (p) => p)}`,
    );
  return parts.length ? parts.join('; ') : 'no changes';
}

const SHORT_VALUE = 60;
const shown = (f: FieldChange, side: 'old' | 'new') => (side in f ? JSON.stringify(f[side]) : '(none)');

function fieldLines(f: FieldChange): string[] {
  const head = `  ${f.path}${f.lanes ? ` [${f.lanes.join(', ')}]` : ''}`;
  const [a, b] = [shown(f, 'old'), shown(f, 'new')];
  if (a.length + b.length <= SHORT_VALUE) return [`${head}: ${a} → ${b}`];
  return [head, `    - ${a}`, `    + ${b}`];
}

/** The summary line, then each model (added, removed, changed with its fields), then the catalog changes. */
export function renderDiff(d: SemanticDiff, summary = summaryLine(d)): string {
  const lines = [summary];
  for (const m of d.models) {
    lines.push('', `${m.change} ${m.slug} (${m.name})`);
    for (const f of m.fields) lines.push(...fieldLines(f));
  }
  if (d.catalog.length) {
    lines.push('', 'catalog');
    for (const f of d.catalog) lines.push(...fieldLines(f));
  }
  return `${lines.join('\n')}\n`;
}
