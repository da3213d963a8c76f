// The Last-Modified policy of a release, in one place. No clock is read: a body's time comes from the data, or from
// --published-at. A body that changes or appears (a path may come back after a removal) must get a time in a later
// whole second than every Last-Modified the previous release shows, or If-Modified-Since would answer 304 for its new
// bytes (HTTP dates have whole seconds). The publication time is the time its changed bodies got, so no body is ever
// later than its publication: that lets the next build bound every time any path ever had, removed paths included,
// by the previous release alone.
import { UsageError } from '../errors.js';
import type { Manifest, ManifestEntry } from './files.js';
import { ManifestTable } from './tables.js';

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
  if (p.entries instanceof ManifestTable) {
    // Its few distinct times, without an entry object per path.
    const t = p.entries.latestLastModified();
    return t !== null && t > latest ? t : latest;
  }
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

/** The latest Last-Modified a manifest shows (latestLastModified, for a whole manifest). */
function latestOf(m: Manifest): string {
  let latest = m.publishedAt;
  for (const f of m.files) if (f.last_modified > latest) latest = f.last_modified;
  return latest;
}

const wholeSecond = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** What a remote shows of the times its clients may hold. */
export interface RemoteTimes {
  /** The live publication's manifest; null when it cannot be read back (then no body keeps its time). */
  live: Manifest | null;
  /** The manifests of the other kept publications that can be read. */
  others: readonly Manifest[];
  /** Every kept publication's time, as the pointer gives it, its manifest readable or not. */
  notBefore: readonly string[];
}

/**
 * A kept publication made live again by `publish --rollback`: its bytes, with times no client can take for older
 * ones. Clients may hold any body the kept publications served, with its time, and the live one's are the newest;
 * `to`'s own times are older, so If-Modified-Since would answer 304 for bytes that changed back (RFC 9110 13.1.3).
 * A body the live publication serves at its path with the same bytes keeps the later of the two times; every other
 * body, and the publication itself, take the first whole second after every Last-Modified the remote shows. Either
 * way, a kept publication with other bytes at the path must show an earlier whole second, or the body too takes that
 * time. The next build continues from these times, so it never goes back behind the rolled-back-from one.
 */
export function rolledBackTimes(to: Manifest, kept: RemoteTimes): Manifest {
  const manifests = [...(kept.live ? [kept.live] : []), ...kept.others];
  const latest = [...[to, ...manifests].map(latestOf), ...kept.notBefore].reduce((a, b) => (b > a ? b : a));
  const at = secondAfter(latest, latest);
  const live = kept.live && new Map(kept.live.files.map((f) => [f.path, f]));
  const byPath = manifests.map((m) => new Map(m.files.map((f) => [f.path, f])));
  const files = to.files.map((f): ManifestEntry => {
    const same = live?.get(f.path);
    let t =
      same?.sha256 !== f.sha256 ? at : same.last_modified > f.last_modified ? same.last_modified : f.last_modified;
    if (t !== at)
      for (const m of byPath) {
        const other = m.get(f.path);
        if (other && other.sha256 !== f.sha256 && wholeSecond(other.last_modified) >= wholeSecond(t)) t = at;
      }
    return t === f.last_modified ? f : { ...f, last_modified: t };
  });
  return { ...to, publishedAt: at, files };
}
