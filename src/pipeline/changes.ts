// The build's semantic step: compare the data with the live release's snapshot, skip a build that would publish the
// live release again, and write this release's snapshot and changes feed (GET /api/v1/changes) with its bodies.
//   artifacts/snapshot.json               the semantic snapshot (schema/snapshot.ts), listed in the manifest
//   api/v1/changes/index.json             the last FEED_LENGTH publications' changes, newest first
//   api/v1/changes/since/<revision>.json  those after <revision>, for each revision the feed reaches back to
// The feed of a release is the previous release's feed plus this build's diff, so it needs no history beyond it.
import { readFile, stat } from 'node:fs/promises';
import type { z } from 'zod';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../errors.js';
import type { CompressionLevels } from '../publication/compress.js';
import { changesFile } from '../publication/layout.js';
import { attributionOf, TIER } from '../publication/assemble.js';
import { PublicationMeta } from '../publication/files.js';
import { currentRelease } from '../publication/folder.js';
import { parseJsonFile } from '../publication/reader.js';
import { manifestRefOf, POINTER_KEY } from '../publication/remote.js';
import { readRemote } from '../publish/read-remote.js';
import type { RemoteOptions } from '../publish/targets/index.js';
import type { PendingBody, PreviousRelease } from '../publication/writer.js';
import { ChangesResponse, type FieldChange, type PublicationChanges, type SemanticDiff } from '../schema/api.js';
import { Snapshot, type SnapshotContent } from '../schema/snapshot.js';
import type { Computed } from './compute/index.js';
import { diffSnapshots, isEmptyDiff, summaryLine } from './diff.js';
import { contentOf, SNAPSHOT_FILE, snapshotBody, snapshotOf } from './snapshot.js';

/** How many publications the changes feed keeps: `since` reaches back to the one before the oldest. */
export const FEED_LENGTH = 30;
const FEED_FILE = changesFile(null);

export interface SemanticStep {
  /** The line the build prints: `1 model changed: gpt-4o (description.en)`. */
  summary: string;
  /** Against the live release's snapshot; null when there is none to compare with. */
  diff: SemanticDiff | null;
  /** Set when the build would publish the live release again (this one, on this disk): the build stops here. */
  unchanged: (PreviousRelease & { dir: string }) | null;
  /** The publication's bodies, then this release's snapshot and changes bodies. */
  withBodies(bodies: Iterable<PendingBody>): Generator<PendingBody>;
  /** How many bodies withBodies adds (for the build's progress total). */
  bodyCount: number;
}

export interface SemanticOptions {
  revision: string;
  /** dataRevision() of the data: equal in the live snapshot means the same data, schema and tool. */
  dataRevision: string;
  pageSizes: number[];
  /** The levels of the representations this build writes; null with --no-compression. */
  compression: CompressionLevels | null;
  /** --published-at, when given. */
  forcedPublishedAt?: string;
  /**
   * The publication time of this build when it makes a new revision (then every new body gets it: build.ts
   * publicationTimes), for the feed entry, which is written before the time of an unchanged revision is known.
   */
  newRevisionAt: string;
}

type Previous = PreviousRelease;

export async function semanticStep(c: Computed, previous: Previous | null, o: SemanticOptions): Promise<SemanticStep> {
  const snapshot = snapshotOf(c, o.dataRevision);
  const live = previous ? await readPreviousSemantics(previous) : null;
  const before = live?.snapshot ?? null;
  // A previous publication read from a remote (build --previous) is not on this disk: the build writes it, so that
  // `publish` can run from --out (it then uploads nothing).
  if (previous?.dir && before && sameBuild(previous, before, o)) {
    return {
      summary: 'no changes',
      diff: { models: [], catalog: [] },
      unchanged: { ...previous, dir: previous.dir },
      withBodies: (b) => passThrough(b),
      bodyCount: 0,
    };
  }
  const diff = before ? diffSnapshots(contentOf(before), snapshot) : null;
  const summary = !previous
    ? `first publication: ${Object.keys(snapshot.models).length} models`
    : diff
      ? summaryLine(diff)
      : `changes not computed: the live release ${previous.revision} has no ${SNAPSHOT_FILE} (built by an older ` +
        'modelpub); the changes feed starts here';

  let publications: PublicationChanges[] = [];
  let oldest = o.revision;
  if (previous && diff && previous.revision !== o.revision) {
    const entry = {
      publicationRevision: o.revision,
      previousRevision: previous.revision,
      publishedAt: o.newRevisionAt,
    };
    publications = [{ ...entry, summary, ...diff }, ...(live?.feed?.data.publications ?? [])].slice(0, FEED_LENGTH);
    oldest = publications.at(-1)!.previousRevision;
  } else if (previous && diff && isEmptyDiff(diff) && live?.feed) {
    // The same revision again (other page sizes): the feed stands. Over other data (a --revision given again), it
    // starts anew: a client holding that revision cannot be told which of the two it read.
    publications = live.feed.data.publications;
    oldest = live.feed.data.oldest;
  }
  const site = c.data.site;
  const feed = [
    ...feedBodies(o.revision, oldest, publications, {
      head: `{"schemaVersion":${JSON.stringify(site.schema_version)},"publicationRevision":`,
      envelope: `,"tier":"${TIER}","attribution":${JSON.stringify(attributionOf(site))}`,
    }),
  ];
  return {
    summary,
    diff,
    unchanged: null,
    bodyCount: 1 + feed.length,
    *withBodies(bodies) {
      yield* bodies;
      yield snapshotBody(snapshot);
      yield* feed;
    },
  };
}

function* passThrough(bodies: Iterable<PendingBody>): Generator<PendingBody> {
  yield* bodies;
}

/** Whether a build would write the live release again: same data, schema, tool, revision, page sizes and time. */
function sameBuild(previous: Previous, before: Snapshot, o: SemanticOptions): boolean {
  return (
    before.dataRevision === o.dataRevision &&
    previous.revision === o.revision &&
    previous.meta.pageSizes.join() === o.pageSizes.join() &&
    // A release with other representations (or none) is not what this build would write.
    previous.compression?.brotliQuality === o.compression?.brotliQuality &&
    previous.compression?.gzipLevel === o.compression?.gzipLevel &&
    (o.forcedPublishedAt === undefined || new Date(o.forcedPublishedAt).toISOString() === previous.publishedAt)
  );
}

/** A field change with its keys in one order, whichever file it was read from. */
const fieldJson = (f: FieldChange): FieldChange => ({
  path: f.path,
  ...('old' in f ? { old: f.old } : {}),
  ...('new' in f ? { new: f.new } : {}),
  ...(f.lanes ? { lanes: f.lanes } : {}),
});
const entryJson = (p: PublicationChanges): PublicationChanges => ({
  publicationRevision: p.publicationRevision,
  previousRevision: p.previousRevision,
  publishedAt: p.publishedAt,
  summary: p.summary,
  models: p.models.map((m) => ({ slug: m.slug, name: m.name, change: m.change, fields: m.fields.map(fieldJson) })),
  catalog: p.catalog.map(fieldJson),
});

/**
 * The feed's answers: index.json (every kept publication) and, for each revision `since` may name, those after it.
 * A revision id used twice (a --revision given again) answers for its newest use.
 */
function* feedBodies(
  latest: string,
  oldest: string,
  publications: readonly PublicationChanges[],
  parts: { head: string; envelope: string },
): Generator<PendingBody> {
  const entries = publications.map((p) => JSON.stringify(entryJson(p)));
  const body = (file: string, upTo: number): PendingBody => ({
    path: file,
    head: parts.head,
    tail:
      `${parts.envelope},"data":{"latest":${JSON.stringify(latest)},"oldest":${JSON.stringify(oldest)},` +
      `"publications":[${entries.slice(0, upTo).join(',')}]}}`,
  });
  yield body(FEED_FILE, entries.length);
  const answered = new Set<string>();
  for (let i = 0; i <= publications.length; i++) {
    const since = i < publications.length ? publications[i]!.publicationRevision : oldest;
    if (answered.has(since)) continue;
    answered.add(since);
    yield body(changesFile(since), i);
  }
}

// ---- reading a release's snapshot and feed ----------------------------------------------------------------------

export interface ReleaseSemantics {
  /** null for a release built before snapshots were written. */
  snapshot: Snapshot | null;
  feed: ChangesResponse | null;
}

/** A release file's bytes, or null when it has none; `where` names it in errors. */
type ReadFile = (file: string) => Promise<{ bytes: Buffer; where: string } | null>;

async function readSemantics(read: ReadFile): Promise<ReleaseSemantics> {
  const parsed = async <T>(schema: z.ZodType<T>, file: string): Promise<T | null> => {
    const got = await read(file);
    if (got === null) return null;
    try {
      return parseJsonFile(schema, got.bytes, got.where);
    } catch (e) {
      throw new UsageError(`${(e as Error).message}: the release's semantic snapshot or changes feed is damaged`);
    }
  };
  return { snapshot: await parsed(Snapshot, SNAPSHOT_FILE), feed: await parsed(ChangesResponse, FEED_FILE) };
}

/** The snapshot and feed of a release folder (a release of an older build has none). */
export function readReleaseSemantics(dir: string): Promise<ReleaseSemantics> {
  return readSemantics(async (file) => {
    const where = path.join(dir, file);
    const bytes = await readFile(where).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return null;
      throw new UsageError(`cannot read ${where}: ${e.message}`);
    });
    return bytes && { bytes, where };
  });
}

/** The snapshot and feed of the publication a build continues from, when its manifest lists them. */
function readPreviousSemantics(previous: Previous): Promise<ReleaseSemantics> {
  return readSemantics(async (file) => {
    const entry = previous.entries.get(file);
    if (!entry) return null;
    const where = previous.dir ? path.join(previous.dir, file) : `${file} of ${previous.revision} at ${previous.where}`;
    const bytes = await previous.readBody(entry).catch((e: Error) => {
      throw new UsageError(`cannot read ${where}: ${e.message}`);
    });
    return { bytes, where };
  });
}

/** The live snapshot a diff compares against, and where it was found. */
export interface PublishedSnapshot {
  where: string;
  revision: string;
  snapshot: Snapshot;
}

/**
 * The snapshot of what is published at `against`: a build's --out (its live release), one release folder, or a
 * file:// URL of either. Other URLs go to readRemoteSnapshot.
 */
export async function readPublishedSnapshot(against: string, o: RemoteOptions = {}): Promise<PublishedSnapshot> {
  let dir = against;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(against)) {
    const url = new URL(against);
    if (url.protocol !== 'file:') return readRemoteSnapshot(url, o);
    dir = fileURLToPath(url);
    // A file:// URL of the root a publish wrote to (it has a pointer, not a release).
    if (await isFile(path.join(dir, POINTER_KEY))) return readRemoteSnapshot(url, o);
  }
  const release = (await currentRelease(dir)) ?? ((await isFile(path.join(dir, 'publication.json'))) ? dir : null);
  if (!release)
    throw new UsageError(
      `--against ${against} holds no publication: give a build's --out (with a current release), a release folder or a file:// URL of one`,
    );
  const { snapshot } = await readReleaseSemantics(release);
  if (!snapshot)
    throw new UsageError(
      `the release ${release} has no ${SNAPSHOT_FILE}: it was built by a modelpub without semantic snapshots; build ` +
        'it again to compare against it',
    );
  const meta = parseJsonFile(
    PublicationMeta,
    await readFile(path.join(release, 'publication.json')),
    path.join(release, 'publication.json'),
  );
  return { where: release, revision: meta.publicationRevision, snapshot };
}

/**
 * The snapshot of the live publication at a remote in the layout `modelpub publish` writes (https://, http://,
 * s3://): pointer -> manifest -> the snapshot as an object by its hash.
 */
export async function readRemoteSnapshot(url: URL, o: RemoteOptions = {}): Promise<PublishedSnapshot> {
  const remote = await readRemote(url.href, o);
  try {
    const pointer = await remote.pointer();
    if (!pointer) throw new UsageError(`--against ${url.href}: nothing is published there (it has no current.json)`);
    const { manifest } = await remote.manifest(manifestRefOf(pointer.live));
    const revision = manifest.publicationRevision;
    const entry = manifest.files.find((f) => f.path === SNAPSHOT_FILE);
    if (!entry)
      throw new UsageError(
        `the live publication ${revision} at ${remote.description} has no ${SNAPSHOT_FILE}: it was built by a ` +
          'modelpub without semantic snapshots',
      );
    const where = `${SNAPSHOT_FILE} of ${revision} at ${remote.description}`;
    const snapshot = parseJsonFile(Snapshot, await remote.object(entry.sha256, entry.bytes), where);
    return { where: remote.description, revision, snapshot };
  } finally {
    await remote.close();
  }
}

const isFile = (p: string) =>
  stat(p).then(
    (s) => s.isFile(),
    () => false,
  );

export type { SnapshotContent };
