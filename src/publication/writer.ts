// Writing a release into a staging folder. Each distinct body is written once; every other path with the same
// bytes is a hard link to it. A body whose content did not change since the previous release keeps that release's
// revision and bytes (it is hard-linked from the previous release, or written again when that release is remote), so
// its sha256, ETag and Last-Modified stay put. Every other body takes the time policy's `changedAt` (times.ts).
// A body whose inputs digest equals the one the previous release's manifest lists for its path is not made at all:
// its entry and representations are carried over and its file hard-linked, so a rebuild costs what changed. With a
// remote previous release (build --previous URL on a fresh runner) such a body is made with the previous revision and
// written, not hashed, and its representations are downloaded rather than compressed again (previous-packs.ts).
import { createHash, hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { link, mkdir, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import pMap, { pMapStop } from 'p-map';
import { UsageError } from '../errors.js';
import { JSON_CONTENT_TYPE } from '../schema/primitives.js';
import { namedWriteError, writeFileNamed } from '../write-file.js';
import { type BodyParts, joinedBytes } from './assemble.js';
import { Budget } from './budget.js';
import type { ChangeList, ManifestEntry, PublicationMeta } from './files.js';
import { CHANGES_FILE, isArtifactFile, MANIFEST_FILE, META_FILE } from './layout.js';
import { LARGE_BODY_BYTES, type Made, made, STREAM_CHUNK_BYTES } from './made-body.js';
import { type ManifestHead, ManifestLog, type RepresentationsToWrite, writeManifest } from './manifest-log.js';
import { type PackStats, type PackWriterOptions, representationWriter } from './pack-writer.js';
import { linkThread } from './link-thread.js';
import type { IndexedRelease } from './release.js';
import { Column, DigestTable, type RepresentationTable, StringColumn } from './tables.js';
import type { TimePolicy } from './times.js';

/**
 * A body to write at `path`: its parts, or (with the digest of its inputs) a function that makes them, called only
 * when the previous release has no body made from the same inputs at that path.
 */
export type PendingBody = {
  path: string;
  /** JSON unless said otherwise (llms.txt is text). */
  contentType?: string;
} & (BodyParts | { inputs: string; render: () => BodyParts });

/** The parts of a pending body, made if they are not yet. */
export const partsOf = (b: PendingBody): BodyParts => ('render' in b ? b.render() : b);

/** The inputs digest of a body given as its parts: the parts themselves, hashed (cheap bodies, few of them). */
const partsDigest = (b: BodyParts & { contentType?: string }): string => {
  const tail = typeof b.tail === 'object' && 'pieces' in b.tail ? joinedBytes(b.tail.pieces) : b.tail;
  return hash('sha256', `${b.contentType ?? ''}\n${b.head.length}:${b.head}${tail}`, 'base64url');
};

/** What a write did; the representations' figures are the representation writer's (PackStats, pack-writer.ts). */
export interface WriteStats extends PackStats {
  files: number;
  uniqueBodies: number;
  linkedFromPrevious: number;
  /** Bodies that got `changedAt` (changed, or at a path the previous release does not have). */
  newlyModified: number;
  /** Bodies made to bytes, and bodies carried over from the previous release by their inputs digest (not made). */
  rendered: number;
  skipped: number;
  /** Bodies at a new path linked to a body of this build made from the same inputs (not made: `twins` below). */
  twins: number;
  /**
   * Of the bodies made, those carried over by their inputs digest from a remote previous release: made (with its
   * revision) only to be written, their entry and representations carried, not hashed.
   */
  rewritten: number;
  /** Bodies made in chunks, never whole (largeBodyBytes). */
  streamed: number;
}

/** The stats of a write that wrote nothing (a no-change build reports these too). */
export const emptyWriteStats = (): WriteStats => ({
  files: 0,
  uniqueBodies: 0,
  bytesWritten: 0,
  linkedFromPrevious: 0,
  newlyModified: 0,
  encodedNew: 0,
  encodedReused: 0,
  packsLinked: 0,
  rendered: 0,
  skipped: 0,
  twins: 0,
  rewritten: 0,
  previousUnread: 0,
  previousUnreadWhy: null,
  streamed: 0,
});

export interface WriteOptions {
  stagingDir: string;
  revision: string;
  times: TimePolicy;
  /**
   * The live publication the build continues from: the live release of its --out, or (build --previous URL, a fresh
   * CI runner) the live publication of a remote, whose bodies are not on this disk (dir null: they are written).
   */
  previous: IndexedRelease | null;
  concurrency?: number;
  onProgress?: (done: number) => void;
  /** Makes the representations of new distinct bodies (pack-writer.ts); without it the release has none. */
  compressor?: PackWriterOptions['compressor'];
  /** A body of pieces from this size on is streamed, never whole in memory (default LARGE_BODY_BYTES; tests give less). */
  largeBodyBytes?: number;
}

/** Writes `chunks` to `file`, one after the other; a failure names the file. */
async function writeChunks(file: string, chunks: Iterable<Buffer>): Promise<void> {
  const out = await open(file, 'w').catch((e) => Promise.reject(namedWriteError(e, file)));
  try {
    for (const chunk of chunks) await out.write(chunk).catch((e) => Promise.reject(namedWriteError(e, file)));
  } finally {
    await out.close();
  }
}

/**
 * Bodies under way at once; the bytes made are bounded apart from it (BODY_BYTES_IN_FLIGHT). A rebuild over a kept
 * release takes twice as many, so that the link thread links one batch of carried files while the next gathers; a
 * full build, which links nothing, keeps the number its memory was measured with.
 */
const CONCURRENCY = 32;
/** Bodies made and not yet written (nor handed to the pool): past this many bytes, making the next one waits. */
const BODY_BYTES_IN_FLIGHT = 64 * 1024 * 1024;
/** The manifest's entries as they come (manifest-log.ts), in the staging folder until manifest.json is written. */
const MANIFEST_LOG_FILE = '.manifest.unsorted';

/**
 * The hex sha256 of a file of about `bytes`, read whole when small, else a chunk at a time (a catalog body is 100 MB);
 * null when it cannot be read. A stream costs a 1 MB buffer whatever the file's size: over the 190,000 files of a
 * rebuild that makes every body again, that churn in the GC was most of the build's time.
 */
async function fileSha256(file: string, bytes: number): Promise<string | null> {
  const h = createHash('sha256');
  try {
    if (bytes <= STREAM_CHUNK_BYTES) h.update(await readFile(file));
    else for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  } catch {
    return null;
  }
  return h.digest('hex');
}

/**
 * Writes `bodies` into the staging folder, each carried over, linked or written (and its representations reused or
 * compressed); returns what writeReleaseFiles needs to finish the release.
 */
export async function writeBodies(
  bodies: Iterable<PendingBody>,
  o: WriteOptions,
): Promise<{
  /** In the staging folder until writeReleaseFiles has written the manifest (which removes it). */
  entries: ManifestLog;
  /** Each distinct body's representations, with their packs. */
  representations: RepresentationTable | null;
  stats: WriteStats;
}> {
  const entries = new ManifestLog(path.join(o.stagingDir, MANIFEST_LOG_FILE), o.previous?.files ?? null);
  // The distinct bodies written, by sha256: the path of the first file holding those bytes (the others are hard
  // links to it), and the write of that file while it is under way.
  const distinct = new DigestTable();
  const firstPath = new StringColumn();
  const writing = new Map<number, Promise<void>>();
  // The bodies this build made with its own revision, by their inputs: the row of their bytes in `distinct`, and their
  // size. Two bodies of the same inputs have the same bytes but for the revision (inputs.ts), so a body at a new path
  // with the inputs of one made before it is linked to it, not made: the display variant of a model without overrides
  // is its public variant's twin, 45,000 of the default data's 75,821 bodies.
  const twins = new DigestTable();
  const twinRow = new Column(new Uint32Array(1024));
  const twinBytes = new Column(new Float64Array(1024));
  // The content type and whether it is an artifact (which has no representations) are the writer's, not the inputs'.
  const twinKey = (b: PendingBody, inputs: string) =>
    hash('sha256', `${b.contentType ?? JSON_CONTENT_TYPE}\n${isArtifactFile(b.path)}\n${inputs}`, 'hex');
  // The bodies being made, by twin key, until they are in `twins`: a twin that comes while its first is made (a
  // display variant's detail right after the public one's) waits for it rather than being made too.
  const twinsUnderWay = new Map<string, Promise<void>>();
  const dirs = new Map<string, Promise<unknown>>();
  const stats = emptyWriteStats();
  // A rebuild's carried files, linked beside the main thread (link-thread.ts).
  const links = o.previous?.dir ? linkThread(o.previous.dir, o.stagingDir) : null;
  const encoder = o.compressor ? representationWriter({ ...o, compressor: o.compressor }, stats) : null;
  const changedAt = o.times.changedAt;
  let refused: string | null = null; // why a body that changed cannot have changedAt (a forced time too early)
  let failure = null as { error: unknown } | null; // the first body that failed
  const ensureDir = (dir: string) => {
    let p = dirs.get(dir);
    if (!p) dirs.set(dir, (p = mkdir(dir, { recursive: true })));
    return p;
  };
  let done = 0;
  const inFlight = new Budget(BODY_BYTES_IN_FLIGHT);
  /**
   * Carries `prev` over for a body made from the same inputs: its file hard-linked (when it is on this disk and has
   * the size listed), its representations taken from the previous pack. False when it cannot be: the body is made.
   */
  const carry = async (b: PendingBody, prev: ManifestEntry): Promise<boolean> => {
    if (!links) return false; // the previous release is not on this disk
    const encoded = encoder !== null && !isArtifactFile(b.path);
    if (encoded && !(await encoder.reusable(prev.sha256))) return false;
    if (!(await links.link(b.path, prev.bytes))) return false;
    if (distinct.find(prev.sha256) < 0) {
      distinct.add(prev.sha256);
      firstPath.push(b.path);
      stats.uniqueBodies++;
      stats.linkedFromPrevious++;
    }
    if (encoded) await encoder.add(prev.sha256, null);
    entries.push(prev, prev);
    stats.files++;
    stats.skipped++;
    return true;
  };
  /** A body that changed or is new takes changedAt: counted, unless the forced time is too early for it (false). */
  const takesChangedAt = (file: string): boolean => {
    const refusal = o.times.refuseChange(file);
    if (refusal !== null) {
      refused ??= refusal;
      return false;
    }
    stats.newlyModified++;
    return true;
  };
  /** Links a body at a new path to its twin, row `twin` of `twins`, instead of making it. */
  const linkTwin = async (b: PendingBody, inputs: string, twin: number): Promise<void> => {
    if (!takesChangedAt(b.path)) return;
    const row = twinRow.values[twin]!;
    const sha256 = distinct.hexOf(row);
    const target = path.join(o.stagingDir, b.path);
    await ensureDir(path.dirname(target));
    await link(path.join(o.stagingDir, firstPath.at(row)), target);
    if (encoder && !isArtifactFile(b.path)) await encoder.add(sha256, null); // the twin's, asked for before it was listed
    entries.push(
      {
        path: b.path,
        sha256,
        bytes: twinBytes.values[twin]!,
        content_type: b.contentType ?? JSON_CONTENT_TYPE,
        revision: o.revision,
        last_modified: changedAt,
        inputs,
      },
      null,
    );
    stats.files++;
    stats.twins++;
  };
  /**
   * Writes the first file of this release with the bytes of `body`: linked from the previous release when unchanged
   * since and still those bytes there (a damaged or missing file is written again, never inherited), else written.
   */
  const writeFirst = async (file: string, body: Made, prev: ManifestEntry | undefined): Promise<void> => {
    const target = path.join(o.stagingDir, file);
    if (prev && prev.sha256 === body.sha256 && o.previous?.dir) {
      const old = path.join(o.previous.dir, file);
      const intact = (await fileSha256(old, prev.bytes)) === body.sha256;
      const linked =
        intact &&
        (await link(old, target).then(
          () => true,
          () => false,
        ));
      if (linked) {
        stats.linkedFromPrevious++;
        return;
      }
    }
    if (body.whole === null) await writeChunks(target, body.chunks());
    else await writeFileNamed(target, body.whole);
    stats.bytesWritten += body.size;
  };
  /** Writes one body; a failure is kept (`failure`), not thrown, so that the bodies under way end first. */
  const writeOne = async (pending: PendingBody): Promise<void> => {
    const prev = o.previous?.files.get(pending.path);
    const inputs = 'render' in pending ? pending.inputs : partsDigest(pending);
    // The same inputs: its bytes are by design the previous entry's, but for the revision in them.
    const same = prev?.inputs === inputs ? prev : undefined;
    // Not carried: its twin's key, looked up at a new path and kept once it is made, is hashed once.
    const key = same && (await carry(pending, same)) ? null : twinKey(pending, inputs);
    // At a new path, a twin being made is waited for; from then on, the lookup and the claim below (twinsUnderWay) are
    // one synchronous step, so that two twins never both find none and are both made.
    if (key !== null && !prev) for (let w = twinsUnderWay.get(key); w; w = twinsUnderWay.get(key)) await w;
    const twin = key !== null && !prev ? twins.find(key) : -1;
    if (key === null || twin >= 0) {
      if (twin >= 0) await linkTwin(pending, inputs, twin);
      o.onProgress?.(++done);
      return;
    }
    const first = !twinsUnderWay.has(key); // the first body of its twin key under way
    let settle = () => {};
    if (first) twinsUnderWay.set(key, new Promise<void>((resolve) => (settle = resolve)));
    // Made only while the bodies made and not yet written stay under BODY_BYTES_IN_FLIGHT: pMap would otherwise make
    // CONCURRENCY at once, and 18 catalog bodies of 100 MB each (2,000 models) come one after the other. It holds
    // the whole budget while it is made (its size is known only then), so that no other body is made meanwhile.
    await inFlight.take(BODY_BYTES_IN_FLIGHT);
    let held = BODY_BYTES_IN_FLIGHT;
    try {
      if (refused || failure) return; // the build fails: it would be made for nothing
      // The parts are let go once the bytes are made: a page's text would otherwise stay in the heap beside its bytes
      // until written and compressed (CONCURRENCY bodies at once, two bytes a character in some locales).
      let parts: BodyParts | null = partsOf(pending);
      stats.rendered++;
      let lastModified = changedAt;
      const largeBodyBytes = o.largeBodyBytes ?? LARGE_BODY_BYTES;
      // Not carried (its previous file is not on this disk) but made from the same inputs: named with the previous
      // revision, it is the previous entry's bytes, so they are not hashed again; a size other than the one listed
      // falls back to the compare.
      let body = same ? made(parts, [same.revision], undefined, largeBodyBytes, same.sha256) : null;
      if (body && body.size === same!.bytes) stats.rewritten++;
      else body = null;
      // Naming the previous revision when that gives the previous bytes (the content did not change), else this one.
      const revisions = prev && prev.revision !== o.revision ? [prev.revision, o.revision] : [o.revision];
      body ??= made(parts, revisions, prev?.sha256, largeBodyBytes);
      const { revision, sha256: hash } = body;
      if (!body.whole) stats.streamed++;
      if (revision !== o.revision) lastModified = prev!.last_modified;
      // The same bytes as before (a rebuild of the same revision) keep their time. Any other body, changed or new,
      // takes changedAt. "New" includes a path removed in an earlier publication and now back: its old time is in
      // no manifest any more, so changedAt must be past every time the previous publication shows, not just past
      // this path's (HTTP dates count whole seconds).
      else if (prev && prev.sha256 === hash) lastModified = prev.last_modified;
      else if (!takesChangedAt(pending.path)) return;
      parts = null;
      const holds = body.whole ? body.size : STREAM_CHUNK_BYTES;
      inFlight.give(held - holds);
      held = holds;
      const target = path.join(o.stagingDir, pending.path);
      await ensureDir(path.dirname(target));
      let row = distinct.find(hash);
      if (row >= 0) {
        await writing.get(row); // a failed write fails this body too
        await link(path.join(o.stagingDir, firstPath.at(row)), target);
      } else {
        row = distinct.add(hash);
        firstPath.push(pending.path);
        const written = writeFirst(pending.path, body, prev);
        writing.set(row, written);
        stats.uniqueBodies++;
        await written;
        writing.delete(row); // kept when it failed: a body with the same bytes then fails as well
      }
      // Written first, so a body made for this call alone (render) can then move to the compression pool uncopied.
      if (encoder && !isArtifactFile(pending.path)) await encoder.add(hash, body, 'render' in pending);
      entries.push(
        {
          path: pending.path,
          sha256: hash,
          bytes: body.size,
          content_type: pending.contentType ?? JSON_CONTENT_TYPE,
          revision,
          last_modified: lastModified,
          inputs,
        },
        prev ?? null,
      );
      if (revision === o.revision && twins.add(key) === twinRow.length) {
        twinRow.push(row);
        twinBytes.push(body.size);
      }
      stats.files++;
      o.onProgress?.(++done);
    } catch (error) {
      failure ??= { error }; // before the budget goes to the next body, which then is not made
      throw error;
    } finally {
      inFlight.give(held);
      if (first) {
        twinsUnderWay.delete(key);
        settle();
      }
    }
  };
  // Once a body failed or was refused, nothing more is read from `bodies`, and the error is thrown once the bodies under
  // way have ended, so that the caller removes a folder nothing writes to any more.
  const underWay = new Set<Promise<void>>();
  const rendered = pMap(
    bodies,
    (pending) => {
      if (refused || failure) return pMapStop;
      const p = writeOne(pending).catch((error: unknown) => {
        failure ??= { error };
      });
      underWay.add(p);
      return p.then(() => {
        underWay.delete(p);
      });
    },
    { concurrency: o.concurrency ?? (links ? 2 : 1) * CONCURRENCY },
  );
  let representations: RepresentationTable | null = null;
  try {
    await rendered.catch((error: unknown) => {
      failure ??= { error }; // `bodies` itself threw
    });
    await Promise.all(underWay);
    if (failure) throw failure.error;
    if (refused) throw new UsageError(refused);
    representations = encoder
      ? await encoder.finish((identity) => readFile(path.join(o.stagingDir, firstPath.at(distinct.find(identity)))))
      : null;
    await entries.seal();
  } catch (e) {
    await entries.remove();
    throw e;
  } finally {
    await links?.close();
    await encoder?.close(); // the spill file, written or not
  }
  return { entries, representations, stats };
}

/** The release's own files, once its bodies are written; publication.json names the manifest's hash. */
export async function writeReleaseFiles(
  stagingDir: string,
  manifest: ManifestHead & {
    files: ManifestLog;
    /** In the manifest's order, with their packs. */
    representations?: RepresentationsToWrite | undefined;
  },
  meta: Omit<PublicationMeta, 'manifestSha256'>,
  changes: ChangeList,
): Promise<PublicationMeta> {
  const { files, representations, ...head } = manifest;
  const file = path.join(stagingDir, MANIFEST_FILE);
  let manifestSha256: string;
  try {
    const out = await open(file, 'w').catch((e) => Promise.reject(namedWriteError(e, file)));
    try {
      manifestSha256 = await writeManifest(out, head, files, representations ?? null).catch((e) =>
        Promise.reject(namedWriteError(e, file)),
      );
    } finally {
      await out.close();
    }
  } finally {
    await files.remove();
  }
  const full: PublicationMeta = { ...meta, manifestSha256 };
  await writeFileNamed(path.join(stagingDir, CHANGES_FILE), JSON.stringify(changes));
  await writeFileNamed(path.join(stagingDir, META_FILE), `${JSON.stringify(full, null, 2)}\n`);
  return full;
}
