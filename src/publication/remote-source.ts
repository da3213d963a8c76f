// Reading a publication in the remote layout (remote.ts): pointer -> manifest -> objects, every byte checked against
// the hash that names it. A static host or public bucket over http(s) (a CDN in front, or any web server over the
// folder a file:// publish wrote), a private bucket over s3:// (the SDK is loaded only then), or that folder (file://).
// The pointer names the live publication; its id is the revision with its manifest's sha256, so a switch (or a
// rollback) is a new id. Objects are immutable and uploaded before the pointer moves: a publication, once named by the
// pointer, stays whole while a publish is under way.
import type { Manifest } from './files.js';
import { checkBytes, IntegrityError } from './integrity.js';
import { type IndexedManifest, parseJsonFile, parseManifest, parseManifestIndex } from './reader.js';
import { type IndexedRelease, openIndexedRelease, openRelease, type Release, type Source } from './release.js';
import {
  keptOf,
  type ManifestRef,
  manifestKey,
  manifestRefOf,
  objectKey,
  POINTER_KEY,
  Pointer,
  publicationId,
  type RemotePublication,
  unpackManifest,
} from './remote.js';
import { MANIFEST_FILE, type StoredBytes } from './layout.js';
import { SHA256_HEX_RE } from '../schema/primitives.js';
import { DEFAULT_READ_BOUNDS } from './targets/bounds.js';
import { openReader, type RemoteOptions } from './targets/index.js';
import type { GetOptions, RemoteReader } from './targets/types.js';

/**
 * The pointer's bound: it names at most --keep publications (1,000), each in about a kilobyte. A larger one is not
 * a pointer `modelpub publish` wrote, and is refused before it fills memory.
 */
export const MAX_POINTER_BYTES = 8 * 1024 * 1024;
/**
 * The pointer's read is short, whatever the reads of bodies may take: a gateway polls it, and a host that trickles it
 * must not hold a poll (and with it every switch) for the minute a body may take.
 */
export const DEFAULT_POINTER_DEADLINE_MS = 10_000;
/** A manifest no pointer gives the size of (an interrupted publish's) is unpacked up to this. */
const MAX_MANIFEST_BYTES = 2 ** 31 - 1;
/** What gzip may add to incompressible bytes, at most: a stored manifest larger than its JSON and this is refused. */
const gzipBound = (bytes: number) => bytes + Math.ceil(bytes / 1024) + 1024;

/** The layout's two mutable-or-named reads; objects are read through a Release. */
export interface RemoteLayout {
  readonly description: string;
  /** current.json, or null where nothing has been published yet. */
  pointer(): Promise<Pointer | null>;
  /** A publication's manifest, checked against its sha256 (and size, when given: the pointer gives it). */
  manifest(ref: ManifestRef): Promise<{ manifest: Manifest; bytes: Buffer }>;
  /** The same manifest, read into tables (IndexedRelease): what a build keeps of the release it continues from. */
  manifestIndex(ref: ManifestRef): Promise<IndexedManifest>;
}

export function remoteLayout(
  r: RemoteReader,
  o: Pick<RemoteOptions, 'bounds' | 'pointerDeadlineMs'> = {},
): RemoteLayout {
  const root = r.description.replace(/\/?$/, '/');
  const pointerDeadlineMs = Math.min(
    o.pointerDeadlineMs ?? DEFAULT_POINTER_DEADLINE_MS,
    o.bounds?.deadlineMs ?? DEFAULT_READ_BOUNDS.deadlineMs,
  );
  return {
    description: r.description,
    async pointer() {
      const b = await r.get(POINTER_KEY, { maxBytes: MAX_POINTER_BYTES, deadlineMs: pointerDeadlineMs });
      return b && parseJsonFile(Pointer, b, `${root}${POINTER_KEY}`);
    },
    async manifest(ref) {
      const { bytes, where } = await manifestBytes(ref);
      const manifest = await refusedAsDamage(parseManifest(bytes, where));
      checkRevision(ref, manifest.publicationRevision);
      return { manifest, bytes };
    },
    async manifestIndex(ref) {
      const { bytes, where } = await manifestBytes(ref);
      const index = await refusedAsDamage(
        parseManifestIndex(
          (async function* () {
            yield bytes;
          })(),
          where,
          async () => bytes,
        ),
      );
      checkRevision(ref, index.head.publicationRevision);
      return index;
    },
  };
  async function manifestBytes(ref: ManifestRef): Promise<{ bytes: Buffer; where: string }> {
    const key = manifestKey(ref);
    const where = `${root}${key}`;
    const stored = await r.get(key, { maxBytes: ref.bytes === undefined ? undefined : gzipBound(ref.bytes) });
    if (!stored) throw new IntegrityError(`${where} is missing`);
    let bytes: Buffer;
    try {
      bytes = unpackManifest(stored, ref.bytes ?? MAX_MANIFEST_BYTES);
    } catch (e) {
      throw new IntegrityError(`${where} cannot be unpacked: ${(e as Error).message}`);
    }
    checkBytes(bytes, where, ref.sha256, ref.bytes);
    return { bytes, where };
  }
}

/** Bytes that match their name but not the schema (a hash that is not one, say): foreign, refused as damage. */
const refusedAsDamage = <T>(parsed: Promise<T>): Promise<T> =>
  parsed.catch((e: Error) => Promise.reject(new IntegrityError(`${e.message}: refused`)));

function checkRevision(ref: ManifestRef, revision: string): void {
  if (revision !== ref.revision)
    throw new IntegrityError(`${manifestKey(ref)} is the manifest of ${revision}, not of ${ref.revision}`);
}

/** One publication the pointer names, opened: its manifest read and checked, its objects read by their sha256. */
export async function openRemoteRelease(r: RemoteReader, p: RemotePublication): Promise<Release> {
  const { manifest, bytes } = await remoteLayout(r).manifest(manifestRefOf(p));
  return openRelease({
    ...remoteReads(r, p),
    manifest,
    manifestBytes: bytes,
    manifestSha256: p.manifest.sha256, // checked by manifest()
  });
}

/** What a release of publication `p` is besides its manifest: its id, and how its objects are read. */
function remoteReads(r: RemoteReader, p: RemotePublication) {
  const root = r.description.replace(/\/?$/, '/');
  const fetch = (s: StoredBytes, bounds: GetOptions) => {
    // The hash becomes a key: one that is not a hash (the manifest's schema takes any string) names no object.
    if (!SHA256_HEX_RE.test(s.sha256))
      throw new IntegrityError(`${root}${MANIFEST_FILE}: ${s.path} has sha256 ${JSON.stringify(s.sha256)}, not a hash`);
    return r.get(objectKey(s.sha256), bounds);
  };
  return {
    id: publicationId(p),
    where: r.description,
    dir: null,
    meta: p.publication,
    fetch: async (s: StoredBytes, bounds: GetOptions) => fetch(s, bounds),
    whereOf: (s: StoredBytes) => `${root}${objectKey(s.sha256)}`,
  };
}

/** openRemoteRelease, as an IndexedRelease. */
export async function openRemoteIndexed(r: RemoteReader, p: RemotePublication): Promise<IndexedRelease> {
  const manifest = await remoteLayout(r).manifestIndex(manifestRefOf(p));
  return openIndexedRelease({ ...remoteReads(r, p), manifest });
}

/**
 * The publication at `url`: file:///PATH, s3://BUCKET/PREFIX (credentials from the AWS chain; `o` takes --endpoint,
 * --region, path style), or http(s)://HOST/PREFIX/ (read with node:http, so bytes arrive as stored).
 */
export async function remoteSource(url: string, o: RemoteOptions = {}): Promise<Source> {
  const r = await openReader(url, o);
  const layout = remoteLayout(r, o);
  /** The publications the last pointer read names: what release(id) opens, without reading the pointer again. */
  let named = new Map<string, RemotePublication>();
  let previous: string[] = [];
  const currentId = async () => {
    const pointer = await layout.pointer();
    if (!pointer) return null;
    named = new Map(keptOf(pointer).map((p) => [publicationId(p), p]));
    const live = publicationId(pointer.live);
    previous = pointer.previous.map(publicationId).filter((id) => id !== live);
    return live;
  };
  const publicationNamed = async (id: string) => {
    // A pointer that moved since currentId() still keeps the publication it named (unless --keep 1): look again.
    if (!named.has(id)) await currentId();
    const p = named.get(id);
    if (!p) throw new Error(`${r.description} no longer keeps publication ${id}`);
    return p;
  };
  const release = async (id: string) => openRemoteRelease(r, await publicationNamed(id));
  return {
    description: r.description,
    nothingPublished:
      `${r.description.replace(/\/?$/, '/')}${POINTER_KEY} is missing: ` +
      'nothing has been published there (modelpub publish writes it)',
    currentId,
    release,
    kept: () => previous,
    async live() {
      const id = await currentId();
      return id === null ? null : release(id);
    },
    async liveIndexed() {
      const id = await currentId();
      return id === null ? null : openRemoteIndexed(r, await publicationNamed(id));
    },
    close: () => r.close(),
  };
}
