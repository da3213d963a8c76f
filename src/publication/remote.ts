// The remote layout: how a publication is laid out on an object store or static host (docs/publication.md, "Remote
// layout"). Three layers, as in an OCI registry: immutable objects named by their content hash, one immutable
// manifest per publication, and one small pointer naming the live publication, written last.
//
//   <root>/current.json                                 the pointer (mutable, short max-age)
//   <root>/revisions/<revision>/manifest-<sha256>.json.gz  the manifest.json of one build, gzipped (immutable)
//   <root>/objects/sha256/<first 2 hex>/<sha256>        one body, stored as is (immutable)
//
// Everything a reader fetches is verified: the pointer names each manifest's sha256 and size (of the JSON, which is
// what publication.json's manifestSha256 names), the manifest each body's. Nothing is stored with Content-Encoding
// metadata, so every client gets the bytes as stored: the manifest is a .gz file its reader unpacks.
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { REVISION_ID, REVISION_ID_RE, SHA256_HEX, SHA256_HEX_RE, Sha256Hex } from '../schema/primitives.js';
import { IntegrityError } from './integrity.js';
import { type Manifest, PublicationMeta } from './files.js';
import { packedRepresentations, type StoredBytes } from './layout.js';

export const REMOTE_FORMAT = 'modelpub-remote/1';
export const POINTER_KEY = 'current.json';
export const REVISIONS_PREFIX = 'revisions/';
export const OBJECTS_PREFIX = 'objects/sha256/';
/** The publish lock (src/publish/lock.ts): one publish or rollback at a time moves the pointer. */
export const LOCK_KEY = 'publish-lock.json';
/** A folder target's files being written (targets/file.ts). */
export const TMP_FOLDER = '.modelpub-tmp';
/** What a publish writes directly under the root: a root holding anything else and no pointer is not ours. */
export const LAYOUT_ROOT_NAMES: readonly string[] = [POINTER_KEY, 'revisions', 'objects', LOCK_KEY, TMP_FOLDER];

/** Objects and manifests never change under their name: a CDN or browser may keep them for a year without asking. */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** The pointer: how late a switch (or a rollback) is seen through a cache in front is bounded by this. */
export const POINTER_CACHE_CONTROL = 'public, max-age=10';
export const GZIP_CONTENT_TYPE = 'application/gzip';

/** One publication the remote holds in full: the live one or a kept one a rollback may return to. */
export const RemotePublication = z.strictObject({
  /** The build's publication.json, as it was: what a gateway needs besides the manifest. */
  publication: PublicationMeta,
  /**
   * The manifest (`manifestKey`): sha256 and size of its JSON, the build's manifest.json. The sha256 is also in its
   * name, so one revision built twice gets two.
   */
  manifest: z.strictObject({ sha256: Sha256Hex, bytes: z.number().int().min(0) }),
});
export type RemotePublication = z.infer<typeof RemotePublication>;

/** current.json. */
export const Pointer = z.strictObject({
  format: z.literal(REMOTE_FORMAT),
  live: RemotePublication,
  /** Publications kept for a rollback, the most recently live first; their objects are all present. */
  previous: z.array(RemotePublication),
});
export type Pointer = z.infer<typeof Pointer>;

/** An object's key. A hash becomes part of a key only when it is one: a manifest's entries are checked when parsed. */
export function objectKey(sha256: string): string {
  if (!SHA256_HEX_RE.test(sha256)) throw notAHash(sha256);
  return `${OBJECTS_PREFIX}${sha256.slice(0, 2)}/${sha256}`;
}

const notAHash = (s: string) =>
  new IntegrityError(`${JSON.stringify(s)} is not a sha256 (64 lowercase hex digits): refused as part of a remote key`);

/** A manifest as the layout names it; its size is known where a pointer names it. */
export interface ManifestRef {
  revision: string;
  sha256: string;
  bytes?: number;
}

export function manifestKey(m: ManifestRef): string {
  if (!SHA256_HEX_RE.test(m.sha256)) throw notAHash(m.sha256);
  if (!REVISION_ID_RE.test(m.revision))
    throw new IntegrityError(`${JSON.stringify(m.revision)} is not a revision id: refused as part of a remote key`);
  return `${REVISIONS_PREFIX}${m.revision}/manifest-${m.sha256}.json.gz`;
}

export const manifestRefOf = (p: RemotePublication): ManifestRef => ({
  revision: p.publication.publicationRevision,
  sha256: p.manifest.sha256,
  bytes: p.manifest.bytes,
});

export const manifestKeyOf = (p: RemotePublication): string => manifestKey(manifestRefOf(p));

const MANIFEST_KEY_RE = new RegExp(`^${REVISIONS_PREFIX}(${REVISION_ID})/manifest-(${SHA256_HEX})\\.json\\.gz$`);

/** The revision and manifest hash a manifest key names, or null for any other key under revisions/. */
export function parseManifestKey(key: string): ManifestRef | null {
  const m = MANIFEST_KEY_RE.exec(key);
  return m ? { revision: m[1]!, sha256: m[2]! } : null;
}

/** One publication's identity: a revision built twice (other page sizes) is two publications. */
export const publicationId = (p: RemotePublication): string =>
  `${p.publication.publicationRevision}/${p.manifest.sha256}`;

/** The live publication first, then the kept ones. */
export const keptOf = (p: Pointer): RemotePublication[] => [p.live, ...p.previous];

/** A content-addressed object a publication needs, with where its bytes are in a local release folder. */
export interface ObjectSource extends StoredBytes {
  contentType: string;
}

/**
 * Every object a manifest names, once per sha256. Representations (a br and a gzip body per distinct body) become
 * objects of their own here when the manifest lists them, stored without Content-Encoding: the gateway sets it.
 */
export function objectsOf(manifest: Manifest): Map<string, ObjectSource> {
  const out = new Map<string, ObjectSource>();
  for (const f of manifest.files) {
    const seen = out.get(f.sha256);
    if (seen && seen.bytes !== f.bytes)
      throw new Error(`manifest lists ${f.sha256} as ${seen.bytes} bytes at ${seen.path} and ${f.bytes} at ${f.path}`);
    if (!seen) out.set(f.sha256, { sha256: f.sha256, bytes: f.bytes, contentType: f.content_type, path: f.path });
  }
  for (const packed of packedRepresentations(manifest.representations ?? {}, manifest.packs)) {
    const body = out.get(packed.identity);
    if (!body) throw new Error(`manifest lists representations of ${packed.identity}, a body it does not list`);
    for (const coding of ['br', 'gzip'] as const) {
      const r = packed[coding];
      if (!out.has(r.sha256)) out.set(r.sha256, { ...r, contentType: body.contentType });
    }
  }
  return out;
}

/**
 * The pointer after `next` goes live: it first, then the publications that were kept, most recently live first,
 * up to `keep` in all. A publication that was kept and goes live again (a rollback) moves to the front.
 */
export function nextPointer(before: Pointer | null, next: RemotePublication, keep: number): Pointer {
  const id = publicationId(next);
  const rest = before ? keptOf(before).filter((p) => publicationId(p) !== id) : [];
  return { format: REMOTE_FORMAT, live: next, previous: rest.slice(0, Math.max(0, keep - 1)) };
}

/**
 * The stored form of a manifest.json: gzip, a twelfth of its size for the default data (1.7 of 21.7 MB), which every
 * publish, rollback and gateway switch reads. Stored as a .gz file, not with Content-Encoding (see the top).
 */
export const packManifest = (json: Buffer): Buffer => gzipSync(json, { level: 9 });

/** The manifest.json in a stored manifest; at most `maxBytes` are unpacked (a damaged file cannot fill memory). */
export const unpackManifest = (stored: Buffer, maxBytes: number): Buffer =>
  gunzipSync(stored, { maxOutputLength: Math.max(1, maxBytes) });

export const pointerBytes = (p: Pointer): Buffer => Buffer.from(`${JSON.stringify(p, null, 2)}\n`);
