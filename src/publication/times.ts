// The Last-Modified policy of a release, in one place. No clock is read: a body's time comes from the data, or from
// --published-at. A body that changes or appears (a path may come back after a removal) must get a time in a later
// whole second than every Last-Modified the previous release shows, or If-Modified-Since would answer 304 for its new
// bytes (HTTP dates have whole seconds). The publication time is the time its changed bodies got, so no body is ever
// later than its publication: that lets the next build bound every time any path ever had, removed paths included,
// by the previous release alone.
import { UsageError } from '../errors.js';
import type { ManifestEntry } from './files.js';

/** What the policy needs of the previous release. */
export interface PreviousTimes {
  revision: string;
  publishedAt: string;
  entries: ReadonlyMap<string, ManifestEntry>;
}

export interface TimePolicy {
  /** The Last-Modified of every body that changes or appears. */
  changedAt: string;
  /** null when a body at `path` may change now; else why not (only a forced time can be too early). */
  refuseChange(path: string): string | null;
  /** The publication time, once the writer knows how many bodies took `changedAt`. */
  publishedAt(newlyModified: number): string;
}

/**
 * `t` if it falls in a later whole second than `before`, else the first whole second after `before` (ISO instants).
 */
export function secondAfter(t: string, before: string): string {
  const next = (Math.floor(Date.parse(before) / 1000) + 1) * 1000;
  return Date.parse(t) >= next ? t : new Date(next).toISOString();
}

/**
 * The latest Last-Modified a previous release shows: its publication time, or a later body time (an older modelpub
 * moved changed bodies past a forced publication time). Every time any path had in any earlier release, removed
 * paths included, is at or before this one.
 */
export function latestLastModified(p: PreviousTimes): string {
  let latest = p.publishedAt;
  for (const e of p.entries.values()) if (e.last_modified > latest) latest = e.last_modified;
  return latest;
}

/** Checked before --out is touched: a build refused for it leaves nothing behind. */
export function checkForcedTime(forced: string, newestInData: string): void {
  const t = new Date(forced).toISOString();
  const newest = new Date(newestInData).toISOString();
  if (t < newest)
    throw new UsageError(
      `--published-at ${t} is before the newest date in the data, ${newest}: a publication cannot predate what it publishes.`,
    );
}

/**
 * --published-at for both times when given; else the newest date in the data, moved past the previous release's
 * latest Last-Modified for changed bodies. Neither goes back behind the previous publication's time.
 */
export function timePolicy(
  forced: string | undefined,
  newestInData: string,
  previous: PreviousTimes | null,
  revision: string,
): TimePolicy {
  const latest = previous && latestLastModified(previous);
  if (forced !== undefined) {
    const t = new Date(forced).toISOString();
    if (previous && t < previous.publishedAt) {
      throw new UsageError(
        `--published-at ${t} is before the previous publication's time ${previous.publishedAt}: Last-Modified would ` +
          'go back. Give a later time, or leave --published-at out.',
      );
    }
    const laterSecond = !latest || secondAfter(t, latest) === t;
    return {
      changedAt: t,
      refuseChange: (path) => (laterSecond ? null : tooEarly(t, path, latest!)),
      publishedAt: () => t,
    };
  }
  const t = new Date(newestInData).toISOString();
  if (!previous || !latest) return { changedAt: t, refuseChange: () => null, publishedAt: () => t };
  const moved = secondAfter(t, latest);
  const kept = t < previous.publishedAt ? previous.publishedAt : t;
  return {
    changedAt: moved,
    refuseChange: () => null,
    publishedAt: (newlyModified) => (newlyModified > 0 || previous.revision !== revision ? moved : kept),
  };
}

const tooEarly = (t: string, file: string, latest: string) =>
  `--published-at ${t} is not in a later second than ${latest}, the latest Last-Modified of the previous publication, ` +
  `and ${file} changed or is new (it may have been published before, and removed): ` +
  'its Last-Modified must be later than any it may have had, or If-Modified-Since would answer 304 for its new bytes. ' +
  `Give --published-at ${secondAfter(t, latest)} or later, or leave it out.`;
