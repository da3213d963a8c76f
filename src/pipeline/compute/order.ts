// Sort orders of the list operation (docs/api.md):
//   popular      the default catalog order: models served by more providers first, then newer releases, then slug
//   newest       release_date, newest first
//   recent       last activity, newest first: the newest of the model's own update date and its measurements in the lane
//   alphabetical displayed name, lower-cased, by code point; ties by slug
import type { Sort } from '../../schema/api.js';
import type { LaneView } from './index.js';

const bySlug = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const desc = (a: string, b: string) => (a > b ? -1 : a < b ? 1 : 0);
const descNumber = (a: number, b: number) => b - a;

export function orderSlugs(view: LaneView, sort: Sort, displayName: (slug: string) => string): string[] {
  const ms = view.models;
  switch (sort) {
    case 'popular':
      return [...ms]
        .sort(
          (a, b) =>
            b.served_by.length - a.served_by.length || desc(a.release_date, b.release_date) || bySlug(a.slug, b.slug),
        )
        .map((m) => m.slug);
    case 'newest':
      return [...ms].sort((a, b) => desc(a.release_date, b.release_date) || bySlug(a.slug, b.slug)).map((m) => m.slug);
    case 'recent':
      return [...ms]
        .sort(
          (a, b) =>
            descNumber(view.lastActivity.get(a.slug) ?? -Infinity, view.lastActivity.get(b.slug) ?? -Infinity) ||
            bySlug(a.slug, b.slug),
        )
        .map((m) => m.slug);
    case 'alphabetical': {
      const key = new Map(ms.map((m) => [m.slug, displayName(m.slug).toLowerCase()]));
      return ms.map((m) => m.slug).sort((a, b) => bySlug(key.get(a)!, key.get(b)!) || bySlug(a, b));
    }
  }
}
