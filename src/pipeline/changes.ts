// The build's semantic step: compare the data with the live release's snapshot, skip a build that would publish the
// live release again, and write this release's snapshot and changes feed (GET /api/v1/changes) with its bodies.
//   artifacts/snapshot.json               the semantic snapshot (schema/snapshot.ts), listed in the manifest
//   api/v1/changes/index.json             the last FEED_LENGTH publications' changes, newest first
//   api/v1/changes/since/<revision>.json  those after <revision>, for each revision the feed reaches back to
// The feed of a release is the previous release's feed plus this build's diff, so it needs no history beyond it.
import { z } from 'zod';
import { UsageError } from '../errors.js';
import type { CompressionLevels } from '../publication/compress.js';
import { changesFile } from '../publication/layout.js';
import { attributionOf, TIER } from '../publication/assemble.js';
import { parseJsonFile } from '../publication/reader.js';
import type { IndexedRelease } from '../publication/source.js';

/** A release on this disk. */
type LocalRelease = IndexedRelease & { dir: string };
import type { PendingBody } from '../publication/writer.js';
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
  unchanged: LocalRelease | null;
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
  /** Where the snapshot's bytes wait for the end of the build (the --out folder: the publication's disk). */
  scratchDir: string;
}

export async function semanticStep(
  c: Computed,
  previous: IndexedRelease | null,
  o: SemanticOptions,
): Promise<SemanticStep> {
  const snapshot = snapshotOf(c, o.dataRevision);
  const live = previous ? await readSemantics(previous) : null;
  const before = live?.snapshot ?? null;
  const previousRevision = previous?.meta.publicationRevision;
  // A previous publication read from a remote (build --previous) is not on this disk: the build writes it, so that
  // `publish` can run from --out (it then uploads nothing).
  if (previous?.dir && before && sameBuild(previous, before, o)) {
    return {
      summary: 'no changes',
      diff: { models: [], catalog: [] },
      unchanged: previous as LocalRelease,
      withBodies: (b) => passThrough(b),
      bodyCount: 0,
    };
  }
  const diff = before ? diffSnapshots(contentOf(before), snapshot) : null;
  const summary = diff ? summaryLine(diff) : `first publication: ${Object.keys(snapshot.models).length} models`;

  let publications: PublicationChanges[] = [];
  let oldest = o.revision;
  if (previousRevision !== undefined && diff && previousRevision !== o.revision) {
    const entry = {
      publicationRevision: o.revision,
      previousRevision,
      publishedAt: o.newRevisionAt,
    };
    publications = [{ ...entry, summary, ...diff }, ...(live?.feed.data.publications ?? [])].slice(0, FEED_LENGTH);
    oldest = publications.at(-1)!.previousRevision;
  } else if (diff && isEmptyDiff(diff) && live) {
    // The same revision again (other page sizes): the feed stands. Over other data (a --revision given again), it
    // starts anew: a client holding that revision cannot be told which of the two it read.
    publications = live.feed.data.publications;
    oldest = live.feed.data.oldest;
  }
  // Bytes in a file (o.scratchDir), and the snapshot's objects let go: the body is written after every other.
  const snapshotFile = snapshotBody(snapshot, o.scratchDir);
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
      yield snapshotFile;
      yield* feed;
    },
  };
}

function* passThrough(bodies: Iterable<PendingBody>): Generator<PendingBody> {
  yield* bodies;
}

/** Whether a build would write the live release again: same data, schema, tool, revision, page sizes and time. */
function sameBuild(previous: IndexedRelease, before: Snapshot, o: SemanticOptions): boolean {
  const { compression } = previous.head;
  return (
    before.dataRevision === o.dataRevision &&
    previous.meta.publicationRevision === o.revision &&
    previous.meta.pageSizes.join() === o.pageSizes.join() &&
    // A release with other representations (or none) is not what this build would write.
    compression?.brotliQuality === o.compression?.brotliQuality &&
    compression?.gzipLevel === o.compression?.gzipLevel &&
    (o.forcedPublishedAt === undefined || new Date(o.forcedPublishedAt).toISOString() === previous.meta.publishedAt)
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
  snapshot: Snapshot;
  feed: ChangesResponse;
}

/** The snapshot and feed of a release, read through it (checked against its manifest) and against their schemas. */
export async function readSemantics(release: IndexedRelease): Promise<ReleaseSemantics> {
  const parsed = async <T>(file: string, parse: (bytes: Buffer, where: string) => T): Promise<T> => {
    const where = `${file} of ${release.meta.publicationRevision} at ${release.where}`;
    const bytes = await release.file(file).catch((e: Error) => {
      throw new UsageError(`cannot read ${where}: ${e.message}`);
    });
    if (!bytes)
      throw new UsageError(`${release.where}: its manifest lists no ${file}: not a release modelpub build wrote`);
    try {
      return parse(bytes, where);
    } catch (e) {
      throw new UsageError(`${(e as Error).message}: the release's semantic snapshot or changes feed is damaged`);
    }
  };
  return {
    snapshot: await parsed(SNAPSHOT_FILE, parseSnapshot),
    feed: await parsed(FEED_FILE, (bytes, where) => parseJsonFile(ChangesResponse, bytes, where)),
  };
}

const SNAPSHOT_MODELS = 100;

/**
 * A snapshot file checked as parseJsonFile checks it, with the same errors, but its models a hundred at a time, and
 * its parsed JSON kept: a checked copy of a large catalog's snapshot would be twice its objects at once.
 */
export function parseSnapshot(bytes: Buffer, where: string): Snapshot {
  const doc: unknown = parseJsonFile(z.unknown(), bytes, where);
  const check = (schema: z.ZodType, value: unknown, at: string[]) => {
    const r = schema.safeParse(value);
    if (r.success) return;
    const issue = r.error.issues[0]!;
    throw new Error(`${where}: ${[...at, ...issue.path].map(String).join('.') || '(top)'}: ${issue.message}`);
  };
  const models = isRecord(doc) ? doc.models : undefined;
  if (!isRecord(doc) || !isRecord(models)) {
    check(Snapshot, doc, []);
    return doc as Snapshot;
  }
  check(Snapshot, { ...doc, models: {} }, []);
  const entries = Object.entries(models);
  for (let i = 0; i < entries.length; i += SNAPSHOT_MODELS)
    check(Snapshot.shape.models, Object.fromEntries(entries.slice(i, i + SNAPSHOT_MODELS)), ['models']);
  return doc as Snapshot;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export type { SnapshotContent };
