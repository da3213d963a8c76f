// Each model's lifecycle as published: its record's status and dates, its successor, and the alias <-> dated
// snapshot links. A record names the snapshots an alias has had; a snapshot's aliases are derived from those, so a
// link is written once. Only public models are named: a link or successor to a model that is withheld is left out.
import type { Lifecycle } from '../../schema/api.js';
import type { ModelEntry } from '../validate.js';
import { toInstant } from '../validate.js';

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The lifecycle of every model of `models` (the public ones), by slug. */
export function lifecycles(models: readonly ModelEntry[]): Map<string, Lifecycle> {
  const slugs = new Set(models.map((m) => m.slug));
  const aliases = new Map<string, Set<string>>();
  for (const m of models)
    for (const s of m.snapshots)
      if (slugs.has(s) && s !== m.slug) {
        const set = aliases.get(s) ?? new Set();
        set.add(m.slug);
        aliases.set(s, set);
      }
  const out = new Map<string, Lifecycle>();
  for (const m of models)
    out.set(m.slug, {
      status: m.status,
      deprecation_date: m.deprecation_date === null ? null : toInstant(m.deprecation_date),
      retirement_date: m.retirement_date === null ? null : toInstant(m.retirement_date),
      successor: m.successor !== null && slugs.has(m.successor) ? m.successor : null,
      aliases: [...(aliases.get(m.slug) ?? [])].sort(byCodePoint),
      dated_versions: [...new Set(m.snapshots.filter((s) => slugs.has(s) && s !== m.slug))].sort(byCodePoint),
    });
  return out;
}
