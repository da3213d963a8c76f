// Writing a release into a staging folder. Each distinct body is written once; every other path with the same
// bytes is a hard link to it. A body whose content did not change since the previous release keeps that release's
// revision and bytes (it is hard-linked from the previous release, or written again when that release is remote), so
// its sha256, ETag and Last-Modified stay put. Every other body takes the time policy's `changedAt` (times.ts).
// A body whose inputs digest equals the one the previous release's manifest lists for its path is not made at all:
// its entry and representations are carried over and its file hard-linked, so a rebuild costs what changed. With a
// remote previous release (build --previous URL on a fresh runner) such a body is made with the previous revision and
// written, not hashed, and its representations are downloaded rather than compressed again (remotePacks).
import { createHash, hash } from 'node:crypto';
import { createReadStream, linkSync, statSync } from 'node:fs';
import { type FileHandle, link, mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import pMap from 'p-map';
import { UsageError } from '../errors.js';
import { JSON_CONTENT_TYPE } from '../schema/primitives.js';
import { namedWriteError, writeFileNamed } from '../write-file.js';
import { type BodyParts, bodyBytes, bodyChunks, bodyStart, joinedBytes, type PiecesTail } from './assemble.js';
import { type ManifestHead, ManifestLog, type RepresentationsToWrite, writeManifest } from './manifest-log.js';
import { Budget } from './budget.js';
import type { CompressionLevels, Compressor, Representations } from './compress.js';
import type { ChangeList, ManifestEntry, PackFile, PublicationMeta } from './files.js';
import { CHANGES_FILE, isArtifactFile, MANIFEST_FILE, META_FILE, newPackName } from './layout.js';
import type { IndexedRelease } from './release.js';
import { Bytes, Column, DigestTable, RepresentationTable, StringColumn } from './tables.js';
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

export interface WriteStats {
  files: number;
  uniqueBodies: number;
  bytesWritten: number;
  linkedFromPrevious: number;
  /** Bodies that got `changedAt` (changed, or at a path the previous release does not have). */
  newlyModified: number;
  /** Distinct bodies compressed by this build, and those whose representations were taken from the previous packs. */
  encodedNew: number;
  encodedReused: number;
  /** The previous release's packs linked into this one (the rest of their live representations were copied). */
  packsLinked: number;
  /** Bodies made to bytes, and bodies carried over from the previous release by their inputs digest (not made). */
  rendered: number;
  skipped: number;
  /**
   * Of the bodies made, those carried over by their inputs digest from a remote previous release: made (with its
   * revision) only to be written, their entry and representations carried, not hashed.
   */
  rewritten: number;
  /** Representations of a remote previous release that could not be read (made again), and why the first could not. */
  previousUnread: number;
  previousUnreadWhy: string | null;
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
  /**
   * Makes the br and gzip representations of new distinct bodies; without it the release has none. memoryBytes: what
   * they may hold in memory before new ones spill to a file (default MEMORY_BYTES).
   */
  compressor?: { pool: Compressor; levels: CompressionLevels; memoryBytes?: number };
  /** A body of pieces from this size on is streamed, never whole in memory (default LARGE_BODY_BYTES; tests give less). */
  largeBodyBytes?: number;
}

/**
 * A body whose tail is pieces of at least this many bytes (a catalog body: 107 MB at 2,000 models, a list artifact)
 * is made in chunks of STREAM_CHUNK_BYTES for each use (hashed, written, compressed), never whole: memory then does
 * not grow with the largest body of a catalog.
 */
export const LARGE_BODY_BYTES = 8 * 1024 * 1024;
const STREAM_CHUNK_BYTES = 2 * 1024 * 1024;

/**
 * A body's bytes as the writer uses them: whole, or for a large body (LARGE_BODY_BYTES) made again in chunks for each
 * use.
 */
type Made = { revision: string; size: number; sha256: string } & (
  | { whole: Buffer; chunks?: undefined }
  | { whole: null; chunks: () => Iterable<Buffer> }
);

/**
 * The body of `parts` that names the first of `revisions` whose bytes have the sha256 `wanted`, else the last: an
 * unchanged body keeps the previous revision. With `known`, the sha256 of the body naming the one revision given: it
 * is not computed.
 */
function made(
  parts: BodyParts,
  revisions: readonly string[],
  wanted: string | undefined,
  largeBodyBytes: number,
  known?: string,
): Made {
  const { tail } = parts;
  if (typeof tail === 'object' && 'pieces' in tail && tail.size >= largeBodyBytes) {
    return streamed({ head: parts.head, tail }, revisions, wanted, known);
  }
  // No closure here: one would keep the parts (a page's text) alive until the body is compressed.
  for (let i = 0; ; i++) {
    const whole = bodyBytes(parts, revisions[i]!);
    const digest = known ?? sha256(whole);
    if (digest === wanted || i === revisions.length - 1)
      return { revision: revisions[i]!, size: whole.length, sha256: digest, whole };
  }
}

/** made() for a large body: hashed naming each of `revisions` in one pass over its chunks, and never whole. */
function streamed(
  parts: BodyParts & { tail: PiecesTail },
  revisions: readonly string[],
  wanted: string | undefined,
  known: string | undefined,
): Made {
  let digests = known === undefined ? [] : [known];
  if (known === undefined) {
    const hashes = revisions.map((r) => createHash('sha256').update(bodyStart(parts, r)));
    let first = true; // bodyChunks' first chunk is the start, hashed above for each revision
    for (const chunk of bodyChunks(parts, revisions[0]!, STREAM_CHUNK_BYTES)) {
      if (!first) for (const h of hashes) h.update(chunk);
      first = false;
    }
    digests = hashes.map((h) => h.digest('hex'));
  }
  const i = wanted !== undefined && digests.includes(wanted) ? digests.indexOf(wanted) : revisions.length - 1;
  const revision = revisions[i]!;
  return {
    revision,
    size: Buffer.byteLength(bodyStart(parts, revision)) + parts.tail.size,
    sha256: digests[i]!,
    whole: null,
    chunks: () => bodyChunks(parts, revision, STREAM_CHUNK_BYTES),
  };
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

/** Compressions asked for and not yet written: past this many bytes of bodies, rendering waits for the pool. */
const MAX_ENCODING_BYTES = 32 * 1024 * 1024;
/** Bodies made and not yet written (nor handed to the pool): past this many bytes, making the next one waits. */
const BODY_BYTES_IN_FLIGHT = 64 * 1024 * 1024;

// The one-shot hash: a third of the cost of createHash() for the build's 75,000 small bodies.
const sha256 = (s: string | Buffer) => hash('sha256', s);

/** The hex sha256 of a file, read a chunk at a time (a catalog body is 100 MB); null when it cannot be read. */
async function fileSha256(file: string): Promise<string | null> {
  const h = createHash('sha256');
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  } catch {
    return null;
  }
  return h.digest('hex');
}

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
  const dirs = new Map<string, Promise<unknown>>();
  const stats = emptyWriteStats();
  const encoder = o.compressor ? representationWriter(o, stats) : null;
  const changedAt = o.times.changedAt;
  let refused: string | null = null; // why a body that changed cannot have changedAt (a forced time too early)
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
    const dir = o.previous?.dir;
    if (!dir) return false;
    const encoded = encoder !== null && !isArtifactFile(b.path);
    if (encoded && !(await encoder.reusable(prev.sha256))) return false;
    const old = path.join(dir, b.path);
    const target = path.join(o.stagingDir, b.path);
    // Synchronous: a rebuild carries tens of thousands of bodies, and a promise per stat and link cost more than the
    // calls themselves (each a few microseconds on a cached inode).
    const st = statSync(old, { throwIfNoEntry: false });
    if (!st?.isFile() || st.size !== prev.bytes) return false;
    await ensureDir(path.dirname(target));
    try {
      linkSync(old, target);
    } catch {
      return false;
    }
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
  const rendered = pMap(
    bodies,
    async (pending) => {
      if (refused) return;
      const prev = o.previous?.files.get(pending.path);
      const inputs = 'render' in pending ? pending.inputs : partsDigest(pending);
      // The same inputs: its bytes are by design the previous entry's, but for the revision in them.
      const same = prev?.inputs === inputs ? prev : undefined;
      if (same && (await carry(pending, same))) {
        o.onProgress?.(++done);
        return;
      }
      // Made only while the bodies made and not yet written stay under BODY_BYTES_IN_FLIGHT: pMap would otherwise
      // make 32 at once, and 18 catalog bodies of 100 MB each (2,000 models) come one after the other. It holds the
      // whole budget while it is made (its size is known only then), so that no other body is made meanwhile.
      await inFlight.take(BODY_BYTES_IN_FLIGHT);
      let held = BODY_BYTES_IN_FLIGHT;
      try {
        const b = pending;
        // The parts are let go once the bytes are made: a page's text would otherwise stay in the heap beside its bytes
        // until written and compressed (32 bodies at once, two bytes a character in some locales).
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
        else {
          const refusal = o.times.refuseChange(b.path);
          if (refusal !== null) {
            refused ??= refusal;
            return;
          }
          stats.newlyModified++;
        }
        parts = null;
        const holds = body.whole ? body.size : STREAM_CHUNK_BYTES;
        inFlight.give(held - holds);
        held = holds;
        const target = path.join(o.stagingDir, b.path);
        await ensureDir(path.dirname(target));
        const first = distinct.find(hash);
        if (first >= 0) {
          await writing.get(first); // a failed write fails this body too
          await link(path.join(o.stagingDir, firstPath.at(first)), target);
        } else {
          const row = distinct.add(hash);
          firstPath.push(b.path);
          const written = (async () => {
            if (prev && prev.sha256 === hash && o.previous?.dir) {
              // Unchanged since the previous publication: share its file if it still holds these bytes (a damaged or
              // missing file is written again, never inherited).
              const old = path.join(o.previous.dir, b.path);
              const intact = (await fileSha256(old)) === hash;
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
          })();
          writing.set(row, written);
          stats.uniqueBodies++;
          await written;
          writing.delete(row); // kept when it failed: a body with the same bytes then fails as well
        }
        // Written first, so a body made for this call alone (render) can then move to the compression pool uncopied.
        if (encoder && !isArtifactFile(b.path)) await encoder.add(hash, body, 'render' in pending);
        entries.push(
          {
            path: b.path,
            sha256: hash,
            bytes: body.size,
            content_type: b.contentType ?? JSON_CONTENT_TYPE,
            revision,
            last_modified: lastModified,
            inputs,
          },
          prev ?? null,
        );
        stats.files++;
        o.onProgress?.(++done);
      } finally {
        inFlight.give(held);
      }
    },
    { concurrency: o.concurrency ?? 32 },
  );
  let representations: RepresentationTable | null = null;
  try {
    await rendered;
    // Thrown after every write in flight has ended, so that the caller can remove the staging folder for good.
    if (refused) throw new UsageError(refused);
    representations = encoder
      ? await encoder.finish((identity) => readFile(path.join(o.stagingDir, firstPath.at(distinct.find(identity)))))
      : null;
    await entries.seal();
  } catch (e) {
    await entries.remove();
    throw e;
  } finally {
    await encoder?.close(); // the spill file, written or not
  }
  return { entries, representations, stats };
}

/** Where a body's representations are until the pack is written (br, then gzip right after it). */
const HELD = 0; // in memory (`held`)
const SPILL = 1; // in the spill file
const PREVIOUS = 2; // in one of the previous release's packs

/**
 * Representations held in memory until the pack is written; past this, new ones go to a spill file (read back from
 * the page cache when the pack is written), so that memory stays bounded whatever the size of the publication (the
 * default data has 87 MB of them, 2,000 models 1.1 GB).
 */
const MEMORY_BYTES = 32 * 1024 * 1024;
/** The spill file in the staging folder (removed before the switch), and what is gathered before one write to it. */
const SPILL_FILE = '.representations.unsorted';
/** The manifest's entries as they come (manifest-log.ts), in the staging folder until manifest.json is written. */
const MANIFEST_LOG_FILE = '.manifest.unsorted';
const SPILL_CHUNK_BYTES = 8 * 1024 * 1024;
/** The buffer finish() copies representations through into the pack. */
const PACK_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * Whether a previous pack is linked into the release (kept whole) or compacted (its live representations copied into
 * the new pack): linked while the representations the new release uses from it are at least half its bytes. So no
 * pack of a release is more than half garbage, and the packs of a release hold at most twice its representations' bytes;
 * and a byte is copied again only once as many bytes of its pack have died since it was written, so compaction
 * costs, over many rebuilds, no more than the representations they made.
 */
const linkPack = (liveBytes: number, packBytes: number): boolean => liveBytes > 0 && 2 * liveBytes >= packBytes;

/**
 * The representations of each distinct body, once: taken from the previous release's packs when it has them at the
 * same levels and the pack holding them is there with the size its manifest lists, else compressed by the pool while
 * rendering goes on (it waits only when the pool is MAX_ENCODING_BYTES behind). finish() links the previous packs
 * still used enough (linkPack) and writes the others' live representations and the new ones into a pack of its own.
 */
function representationWriter(o: WriteOptions, stats: WriteStats) {
  const { pool, levels, memoryBytes = MEMORY_BYTES } = o.compressor!;
  // A row per distinct body, from when its representations are asked for; per row, where they are (HELD...), at which
  // offset there, and for PREVIOUS in which of the previous packs.
  const table = new RepresentationTable();
  const place = new Column(new Uint8Array(1024));
  const offsets = new Column(new Float64Array(1024));
  const fromPack = new Column(new Uint32Array(1024));
  const held = new Bytes();
  const pending = new Set<Promise<void>>();
  const encoding = new Budget(MAX_ENCODING_BYTES);
  let failure: Error | null = null;
  const previous = !o.previous
    ? null
    : o.previous.dir
      ? previousPacks(o.previous, o.previous.dir, levels)
      : remotePacks(o.previous, path.join(o.stagingDir, REMOTE_PACKS_DIR), levels, stats);
  previous?.catch(() => {}); // thrown again where it is awaited
  const spill = spillFile(path.join(o.stagingDir, SPILL_FILE));
  const placeAt = (row: number, where: number, offset: number, pack = 0) => {
    place.values[row] = where;
    offsets.values[row] = offset;
    fromPack.values[row] = pack;
  };

  /** The row of `hash` in the previous table when its pack is sound, else -1. */
  const previousRow = (prev: PreviousPacks | null, hash: string): number => {
    const from = prev ? prev.table.rowOf(hash) : -1;
    return from >= 0 && prev!.sound[prev!.packOf[from]!] === 1 ? from : -1;
  };

  async function reuse(hash: string, row: number): Promise<boolean> {
    const prev = previous && (await previous);
    const from = previousRow(prev, hash);
    if (from < 0) return false;
    if (prev!.fetch && !(await prev!.fetch(from))) return false;
    table.set(row, prev!.table.at(from));
    placeAt(row, PREVIOUS, prev!.offsets[from]!, prev!.packOf[from]!);
    stats.encodedReused++;
    return true;
  }

  const listed = (r: Representations) => ({
    br: { sha256: r.br.sha256, bytes: r.br.size },
    gzip: { sha256: r.gzip.sha256, bytes: r.gzip.size },
  });
  /** Sets row `row` to the representations `r`, held in memory or spilled. */
  function keep(row: number, r: Representations): void {
    table.set(row, listed(r));
    const size = r.br.bytes.length + r.gzip.bytes.length;
    if (held.used + size <= memoryBytes) {
      held.reserve(size);
      placeAt(row, HELD, held.used);
      held.used += r.br.bytes.copy(held.buffer, held.used);
      held.used += r.gzip.bytes.copy(held.buffer, held.used);
    } else placeAt(row, SPILL, spill.append(r.br.bytes, r.gzip.bytes));
  }

  async function encode(row: number, body: Made, move: boolean): Promise<void> {
    const { whole } = body;
    keep(row, await (whole ? pool.compress(whole, { move }) : pool.compressStream(body.size, body.chunks())));
    stats.encodedNew++;
  }

  return {
    /** Whether a previous pack that is there holds the representations of `hash` (a carried body needs them). */
    async reusable(hash: string): Promise<boolean> {
      if (table.rowOf(hash) >= 0) return true;
      const prev = await previous;
      const from = previousRow(prev, hash);
      return from >= 0 && (!prev!.fetch || (await prev!.fetch(from)));
    },
    /**
     * The representations of `hash`: the previous pack's, else those of `body` (null: reusable() said yes). With
     * `move`, `body` may be moved to a compression thread (Compressor.compress): the caller is done with it.
     */
    async add(hash: string, body: Made | null, move = false): Promise<void> {
      if (table.rowOf(hash) >= 0 || failure) return;
      const row = table.start(hash);
      place.push(HELD);
      offsets.push(0);
      fromPack.push(0);
      if (await reuse(hash, row)) return;
      if (!body) throw new Error(`the representations of ${hash} are not in the previous pack`);
      // Begun only under the limit: a streamed body is compressed as its chunks are made, and two at once would
      // hold two bodies' br and gzip streams and outputs.
      const size = body.size;
      await encoding.take(size);
      const p: Promise<void> = encode(row, body, move)
        .catch((e: Error) => {
          failure ??= e;
        })
        .finally(() => {
          pending.delete(p);
          encoding.give(size);
        });
      pending.add(p);
      // And the caller goes on making bodies only while the pool is under the limit.
      await encoding.take(0);
    },
    /**
     * Links the previous packs kept (linkPack) into the staging folder and writes the new pack; returns each distinct
     * body's representations with their places and the release's packs. `bodyOf(hash)` reads an identity body back
     * from the staging folder: a representation found damaged while copied out of a compacted pack is made again.
     */
    async finish(bodyOf: (identity: string) => Promise<Buffer>): Promise<RepresentationTable> {
      while (pending.size) await Promise.all([...pending]);
      if (failure) throw failure;
      const prev = await previous;
      const sorted = table.sorted();
      // What each previous pack still serves; those kept are linked under their own name.
      const live = new Float64Array(prev?.files.length ?? 0);
      for (const row of sorted) if (place.values[row] === PREVIOUS) live[fromPack.values[row]!]! += table.bytesOf(row);
      const linked = new Uint8Array(live.length);
      for (let p = 0; p < live.length; p++) {
        if (!linkPack(live[p]!, prev!.files[p]!.bytes)) continue;
        const name = prev!.files[p]!.path;
        try {
          linkSync(path.join(prev!.dir, name), path.join(o.stagingDir, name));
          linked[p] = 1;
          stats.packsLinked++;
        } catch {} // copied instead (the file went away since it was checked)
      }
      const writes = sorted.filter((row) => place.values[row] !== PREVIOUS || !linked[fromPack.values[row]!]);
      const kept = prev ? prev.files.filter((_, p) => linked[p]).map((f) => f.path) : [];
      const name = newPackName(o.revision, new Set(kept));
      const names = (writes.length ? [...kept, name] : kept).sort();
      const index = new Map(names.map((n, i) => [n, i]));
      for (const row of sorted)
        if (place.values[row] === PREVIOUS && linked[fromPack.values[row]!])
          table.place(row, index.get(prev!.files[fromPack.values[row]!]!.path)!, offsets.values[row]!);
      const packs: PackFile[] = names.map((path) => ({ path, bytes: 0 }));
      for (const p of packs) if (p.path !== name) p.bytes = prev!.files.find((f) => f.path === p.path)!.bytes;
      table.packs = packs;
      if (!writes.length) return table;

      const newIndex = index.get(name)!;
      const spilled = await spill.reader();
      const handles = new Map<number, FileHandle>();
      const previousFile = async (p: number) => {
        let h = handles.get(p);
        if (!h) handles.set(p, (h = await open(path.join(prev!.dir, prev!.files[p]!.path), 'r')));
        return h;
      };
      const file = path.join(o.stagingDir, name);
      // 'wx': a new file, never one of the links (which are the previous release's files).
      const out = await open(file, 'wx').catch((e) => Promise.reject(namedWriteError(e, file)));
      let written = 0;
      try {
        let buffer = Buffer.allocUnsafe(PACK_BUFFER_BYTES);
        let used = 0;
        const flush = async () => {
          await out.write(buffer, 0, used).catch((e) => Promise.reject(namedWriteError(e, file)));
          stats.bytesWritten += used;
          used = 0;
        };
        /** The first of rows [i, next) of `writes`, read to buffer[at...], whose bytes are not those listed. */
        const firstDamaged = (i: number, next: number, at: number): number => {
          for (let k = i; k < next; k++) {
            const { br, gzip } = table.at(writes[k]!);
            const end = at + br.bytes + gzip.bytes;
            if (sha256(buffer.subarray(at, at + br.bytes)) !== br.sha256) return k;
            if (sha256(buffer.subarray(at + br.bytes, end)) !== gzip.sha256) return k;
            at = end;
          }
          return next;
        };
        /** Appends rows [i, next) of `writes`, which are at buffer[used...], to the pack. */
        const placed = (i: number, next: number) => {
          for (let k = i; k < next; k++) {
            table.place(writes[k]!, newIndex, written);
            written += table.bytesOf(writes[k]!);
            used += table.bytesOf(writes[k]!);
          }
        };
        for (let i = 0; i < writes.length; ) {
          const row = writes[i]!;
          const where = place.values[row]!;
          const at = offsets.values[row]!;
          let bytes = table.bytesOf(row);
          let next = i + 1;
          // Runs of rows end to end in one previous pack (a pack is in hash order, so most copied ones are) are copied
          // with one read each, not a read per body.
          if (where === PREVIOUS) {
            while (next < writes.length) {
              const r = writes[next]!;
              const n = table.bytesOf(r);
              const adjacent = place.values[r] === PREVIOUS && fromPack.values[r] === fromPack.values[row];
              if (!adjacent || offsets.values[r] !== at + bytes || bytes + n > PACK_BUFFER_BYTES) break;
              bytes += n;
              next++;
            }
          }
          if (used + bytes > buffer.length) await flush();
          if (bytes > buffer.length) buffer = Buffer.allocUnsafe(bytes);
          if (where === HELD) {
            held.buffer.copy(buffer, used, at, at + bytes);
            placed(i, next);
          } else if (where === SPILL) {
            const { bytesRead } = await spilled!.read(buffer, used, bytes, at);
            if (bytesRead !== bytes)
              throw new Error(`the representations of ${table.identityOf(row)} were cut short while copied`);
            placed(i, next);
          } else {
            // Out of a compacted pack: checked as they are copied (the pack was only checked by its size), and one
            // whose bytes are not those listed is made again from its identity body, never inherited.
            const { bytesRead } = await (await previousFile(fromPack.values[row]!)).read(buffer, used, bytes, at);
            const good = bytesRead === bytes ? firstDamaged(i, next, used) : i;
            placed(i, good);
            if (good < next) {
              const bad = writes[good]!;
              const r = await pool.compress(await bodyOf(table.identityOf(bad)));
              table.set(bad, listed(r));
              stats.encodedReused--;
              stats.encodedNew++;
              const fresh = Buffer.concat([r.br.bytes, r.gzip.bytes]);
              if (used + fresh.length > buffer.length) await flush();
              if (fresh.length > buffer.length) buffer = Buffer.allocUnsafe(fresh.length);
              fresh.copy(buffer, used);
              table.place(bad, newIndex, written);
              written += fresh.length;
              used += fresh.length;
              next = good + 1;
            }
          }
          i = next;
        }
        await flush();
      } finally {
        await out.close();
        for (const h of handles.values()) await h.close();
      }
      packs[newIndex]!.bytes = written;
      return table;
    },
    /**
     * Closes and removes the spill file (and the downloaded previous packs, whose kept ones are linked); a build calls
     * it once the pack is written, or has failed.
     */
    async close(): Promise<void> {
      await spill.remove();
      await (await previous?.catch(() => null))?.close?.();
    },
  };
}

/** An append-only file of representations, written in chunks of SPILL_CHUNK_BYTES and read back by offset. */
function spillFile(file: string) {
  let handle: Promise<FileHandle> | null = null;
  let size = 0;
  let chunk: Buffer[] = [];
  let chunkStart = 0;
  let chunkBytes = 0;
  let written: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    if (!chunkBytes) return written;
    const [bytes, at] = [Buffer.concat(chunk), chunkStart];
    [chunk, chunkStart, chunkBytes] = [[], size, 0];
    handle ??= open(file, 'w+');
    const h = handle;
    written = written.then(async () => {
      await (await h).write(bytes, 0, bytes.length, at).catch((e) => Promise.reject(namedWriteError(e, file)));
    });
    return written;
  };
  return {
    /** Where `parts`, end to end, will be in the file (joined only when the chunk is written: no copy per body). */
    append(...parts: Buffer[]): number {
      const at = size;
      for (const bytes of parts) {
        size += bytes.length;
        chunk.push(bytes);
        chunkBytes += bytes.length;
      }
      if (chunkBytes >= SPILL_CHUNK_BYTES) void flush().catch(() => {}); // the error is thrown again by reader()
      return at;
    },
    /** The file with everything appended written, or null when nothing was. */
    async reader(): Promise<FileHandle | null> {
      await flush();
      return handle ? await handle : null;
    },
    async remove(): Promise<void> {
      await written.catch(() => {});
      const h = handle;
      handle = null;
      if (!h) return;
      await (await h).close();
      await rm(file, { force: true });
    },
  };
}

/** The previous release's packs, as a build reuses them. */
interface PreviousPacks {
  dir: string;
  table: RepresentationTable;
  files: PackFile[];
  /** Per pack: 1 when it is there with the size the manifest lists (what linking it, or reading from it, needs). */
  sound: Uint8Array;
  /** Per row of `table`: its pack, and where its br bytes start in it. */
  packOf: Uint32Array;
  offsets: Float64Array;
  /**
   * A remote release's: puts a row's representations in place in its pack (downloaded, checked); false when they
   * cannot be read, and they are made again.
   */
  fetch?: (row: number) => Promise<boolean>;
  close?: () => Promise<void>;
}

/** Representations of a remote previous release read at once (a br and a gzip object each): 64 requests. */
const REMOTE_ROWS_AT_ONCE = 32;

/** Where a build downloads a remote previous release's packs, in its staging folder (the same disk: linked from). */
const REMOTE_PACKS_DIR = '.previous-packs';

/** Where each representation of `previous` is in its packs, when they were made at `levels` (null else). */
function packsIndex(previous: IndexedRelease, levels: CompressionLevels) {
  const { representations: table } = previous;
  const { compression } = previous.head;
  const same = compression?.brotliQuality === levels.brotliQuality && compression?.gzipLevel === levels.gzipLevel;
  if (!table || !same) return null;
  const packOf = new Uint32Array(table.size);
  const offsets = new Float64Array(table.size);
  let files: PackFile[] = [];
  // `pack` is already an index into the pack files packed() gives (the manifest's list, or the one implied pack).
  for (const { row, pack, br } of table.packed((f) => (files = f))) {
    packOf[row] = pack;
    offsets[row] = br.offset;
  }
  return { table, files, packOf, offsets };
}

/**
 * The previous release's packs and where each representation is in them, when they were made at the same levels
 * (null else). A pack is checked as a carried body is, by its size (stat), not read: one missing or of another size
 * is not sound, and the representations it holds are made again.
 */
async function previousPacks(
  previous: IndexedRelease,
  dir: string,
  levels: CompressionLevels,
): Promise<PreviousPacks | null> {
  const index = packsIndex(previous, levels);
  if (!index) return null;
  const sound = new Uint8Array(index.files.length);
  index.files.forEach((f, p) => {
    const st = statSync(path.join(dir, f.path), { throwIfNoEntry: false });
    sound[p] = st?.isFile() && st.size === f.bytes ? 1 : 0;
  });
  return { dir, ...index, sound };
}

/**
 * A remote previous release's packs, made again in `dir` as the build asks for representations: each pack a file of
 * its listed size, in which a representation is put at its offset once downloaded (an object of its own on the
 * remote, read and checked as every read of a release is: its size and sha256, within the source's bounds) and written
 * straight to the file. Only the representations the build reuses are downloaded; the rest of a pack (those no body of
 * this build has, and the bytes no representation of the previous release lists) stays zeros, which no manifest
 * entry points at. One that cannot be read (missing, damaged, a host that fails) is made again, never inherited. The
 * packs are then linked or compacted as a kept dist/'s are.
 */
async function remotePacks(
  previous: IndexedRelease,
  dir: string,
  levels: CompressionLevels,
  stats: WriteStats,
): Promise<PreviousPacks | null> {
  const index = packsIndex(previous, levels);
  if (!index) return null;
  const { table, files, packOf, offsets } = index;
  await mkdir(dir, { recursive: true }).catch((e) => Promise.reject(namedWriteError(e, dir)));
  const handles: FileHandle[] = [];
  const close = async () => {
    for (const h of handles.splice(0)) await h.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const f of files) {
      const file = path.join(dir, f.path);
      const h = await open(file, 'wx').catch((e) => Promise.reject(namedWriteError(e, file)));
      handles.push(h);
      await h.truncate(f.bytes).catch((e) => Promise.reject(namedWriteError(e, file)));
    }
  } catch (e) {
    await close();
    throw e;
  }
  // Per row: 0 not asked for yet, 1 in place, 2 unreadable.
  const state = new Uint8Array(table.size);
  const reading = new Map<number, Promise<boolean>>();
  // Rows being read: however many bodies the writer has under way, no more requests at once than a modest static
  // host answers in time.
  const reads = new Budget(REMOTE_ROWS_AT_ONCE);
  const get = async (row: number): Promise<boolean> => {
    const pack = packOf[row]!;
    const { br, gzip } = table.at(row);
    let got: Buffer[];
    try {
      got = await Promise.all([br, gzip].map((s) => previous.read({ path: files[pack]!.path, ...s })));
    } catch (e) {
      state[row] = 2;
      stats.previousUnread++;
      stats.previousUnreadWhy ??= (e as Error).message;
      return false;
    }
    const file = path.join(dir, files[pack]!.path);
    const { bytesWritten } = await handles[pack]!.writev(got, offsets[row]!).catch((e) =>
      Promise.reject(namedWriteError(e, file)),
    );
    if (bytesWritten !== br.bytes + gzip.bytes) throw new Error(`${file}: a write was cut short (is the disk full?)`);
    stats.bytesWritten += bytesWritten;
    state[row] = 1;
    return true;
  };
  const read = async (row: number): Promise<boolean> => {
    await reads.take(1);
    try {
      return await get(row);
    } finally {
      reads.give(1);
    }
  };
  const fetch = (row: number): Promise<boolean> => {
    if (state[row]) return Promise.resolve(state[row] === 1);
    let p = reading.get(row);
    if (!p) {
      p = read(row).finally(() => reading.delete(row));
      reading.set(row, p);
    }
    return p;
  };
  return { dir, table, files, sound: new Uint8Array(files.length).fill(1), packOf, offsets, fetch, close };
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
