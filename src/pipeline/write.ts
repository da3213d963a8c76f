// Stage 5: write bodies into a staging folder. Each distinct body is written once; every other path with the same
// bytes is a hard link to it. A body whose content did not change since the previous publication keeps that
// publication's revision and bytes (it is hard-linked from the previous release, not rewritten), so its sha256,
// ETag and Last-Modified stay put. Every other body (changed, or at a path the previous publication does not have:
// new, or removed once and back) gets the new time, which must lie in a later whole second than every
// Last-Modified the previous publication shows (see `changedAt`).
import { createHash } from 'node:crypto';
import { link, mkdir } from 'node:fs/promises';
import path from 'node:path';
import pMap from 'p-map';
import { UsageError } from '../errors.js';
import { writeFileNamed } from '../write-file.js';
import type { ManifestEntry } from '../schema/api.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** A body to publish: `head + JSON(revision) + tail` (see render.envelopeParts). */
export interface PendingBody {
  path: string;
  head: string;
  tail: string;
}

export interface PreviousRelease {
  dir: string;
  revision: string;
  publishedAt: string;
  entries: Map<string, ManifestEntry>;
}

export interface WriteStats {
  files: number;
  uniqueBodies: number;
  bytesWritten: number;
  linkedFromPrevious: number;
  /** Bodies that got `changedAt` (changed, or at a path the previous publication does not have). */
  newlyModified: number;
}

export interface WriteOptions {
  stagingDir: string;
  revision: string;
  /**
   * The Last-Modified of every body that is not kept from the previous publication. It must be in a later whole
   * second than `latestLastModified(previous)`, else writeBodies refuses (a UsageError): a client may hold any path's
   * older bytes with any time up to that one, and If-Modified-Since would answer it 304 for the new bytes.
   */
  changedAt: string;
  previous: PreviousRelease | null;
  /** The message when `changedAt` is too early for a body at `path` (only a forced time can be). */
  tooEarly: (changedAt: string, path: string, latest: string) => string;
  concurrency?: number;
  onProgress?: (done: number) => void;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * `t` if it falls in a later whole second than `before`, else the first whole second after `before` (ISO instants):
 * HTTP dates count whole seconds, so a Last-Modified that must be newer than `before` has to be this.
 */
export function secondAfter(t: string, before: string): string {
  const next = (Math.floor(Date.parse(before) / 1000) + 1) * 1000;
  return Date.parse(t) >= next ? t : new Date(next).toISOString();
}

/**
 * The latest Last-Modified a previous publication shows: its publication time, or a later body time (an older
 * modelpub moved changed bodies past a forced publication time). No body is later than its publication and
 * publication times never go back, so every time any path had in any earlier publication, removed paths included,
 * is at or before this one.
 */
export function latestLastModified(p: PreviousRelease): string {
  let latest = p.publishedAt;
  for (const e of p.entries.values()) if (e.last_modified > latest) latest = e.last_modified;
  return latest;
}

export async function writeBodies(
  bodies: Iterable<PendingBody>,
  o: WriteOptions,
): Promise<{ entries: ManifestEntry[]; stats: WriteStats }> {
  const entries: ManifestEntry[] = [];
  const firstPathOf = new Map<string, Promise<string>>(); // sha256 -> path of the file holding those bytes
  const dirs = new Map<string, Promise<unknown>>();
  const stats: WriteStats = { files: 0, uniqueBodies: 0, bytesWritten: 0, linkedFromPrevious: 0, newlyModified: 0 };
  const latest = o.previous && latestLastModified(o.previous);
  const laterSecond = !latest || secondAfter(o.changedAt, latest) === o.changedAt;
  let refused: string | null = null; // a body that needs a new time when changedAt is too early
  const ensureDir = (dir: string) => {
    let p = dirs.get(dir);
    if (!p) dirs.set(dir, (p = mkdir(dir, { recursive: true })));
    return p;
  };
  let done = 0;
  await pMap(
    bodies,
    async (b) => {
      if (refused) return;
      const prev = o.previous?.entries.get(b.path);
      let revision = o.revision;
      let lastModified = o.changedAt;
      let bytes: string | null = null;
      let hash = '';
      if (prev && prev.revision !== o.revision) {
        const kept = b.head + JSON.stringify(prev.revision) + b.tail;
        const keptHash = sha256(kept);
        if (keptHash === prev.sha256) {
          [revision, lastModified, bytes, hash] = [prev.revision, prev.last_modified, kept, keptHash];
        }
      }
      if (bytes === null) {
        bytes = b.head + JSON.stringify(revision) + b.tail;
        hash = sha256(bytes);
        // The same bytes as before (a rebuild of the same revision) keep their time. Any other body, changed or new,
        // takes changedAt. "New" includes a path removed in an earlier publication and now back: its old time is in
        // no manifest any more, so changedAt must be past every time the previous publication shows, not just past
        // this path's (HTTP dates count whole seconds).
        if (prev && prev.sha256 === hash) {
          lastModified = prev.last_modified;
        } else {
          if (!laterSecond) {
            refused ??= b.path;
            return;
          }
          stats.newlyModified++;
        }
      }
      const target = path.join(o.stagingDir, b.path);
      await ensureDir(path.dirname(target));
      const first = firstPathOf.get(hash);
      if (first) {
        await link(await first, target);
      } else {
        const body = bytes;
        const written = (async () => {
          if (prev && prev.sha256 === hash && o.previous) {
            // Unchanged since the previous publication: share its file (or rewrite the same bytes if it is gone).
            const linked = await link(path.join(o.previous.dir, b.path), target).then(
              () => true,
              () => false,
            );
            if (linked) {
              stats.linkedFromPrevious++;
              return target;
            }
          }
          await writeFileNamed(target, body);
          stats.bytesWritten += Buffer.byteLength(body);
          return target;
        })();
        firstPathOf.set(hash, written);
        stats.uniqueBodies++;
        await written;
      }
      entries.push({
        path: b.path,
        sha256: hash,
        bytes: Buffer.byteLength(bytes),
        content_type: JSON_TYPE,
        revision,
        last_modified: lastModified,
      });
      stats.files++;
      o.onProgress?.(++done);
    },
    { concurrency: o.concurrency ?? 32 },
  );
  // Thrown after every write in flight has ended, so that the caller can remove the staging folder for good.
  if (refused) {
    throw new UsageError(o.tooEarly(o.changedAt, refused, latest!));
  }
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { entries, stats };
}
