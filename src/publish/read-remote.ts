// Reading a publication in the remote layout: pointer -> manifest -> objects, every byte verified against the
// sha256 that names it. What `publish` reads the remote's state with, and what a gateway (`serve --origin`) or a
// build on a fresh runner (`build --previous`) can read the live publication with.
import { createHash } from 'node:crypto';
import { Manifest } from '../publication/files.js';
import { parseJsonFile } from '../publication/reader.js';
import {
  type ManifestRef,
  manifestKey,
  objectKey,
  POINTER_KEY,
  Pointer,
  unpackManifest,
} from '../publication/remote.js';
import { openReader, type RemoteOptions } from './targets/index.js';
import type { RemoteReader } from './targets/types.js';

/** Bytes that are not the ones their name or the manifest promise: a damaged or half-replaced remote. */
export class IntegrityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IntegrityError';
  }
}

export interface Remote {
  readonly description: string;
  /** current.json, or null where nothing has been published yet. */
  pointer(): Promise<Pointer | null>;
  /** A publication's manifest, checked against its sha256 (and size, when given: the pointer gives it). */
  manifest(ref: ManifestRef): Promise<{ manifest: Manifest; bytes: Buffer }>;
  /** One object's stored bytes, checked against its sha256 (and size, when given). */
  object(sha256: string, bytes?: number): Promise<Buffer>;
  close(): Promise<void>;
}

export const sha256Hex = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** A manifest no pointer gives the size of (an interrupted publish's) is unpacked up to this. */
const MAX_MANIFEST_BYTES = 2 ** 31 - 1;

function checkBytes(b: Buffer, where: string, sha256: string, bytes?: number): void {
  if (bytes !== undefined && b.length !== bytes)
    throw new IntegrityError(`${where} holds ${b.length} bytes, not the ${bytes} it was published with`);
  const got = sha256Hex(b);
  if (got !== sha256) throw new IntegrityError(`${where} has sha256 ${got}, not ${sha256}`);
}

/** Bytes under `key` that must hash to `sha256`; a missing key is an error too. */
export async function getVerified(r: RemoteReader, key: string, sha256: string, bytes?: number): Promise<Buffer> {
  const b = await r.get(key);
  const where = `${r.description.replace(/\/?$/, '/')}${key}`;
  if (!b) throw new IntegrityError(`${where} is missing`);
  checkBytes(b, where, sha256, bytes);
  return b;
}

export function remoteOn(r: RemoteReader): Remote {
  return {
    description: r.description,
    async pointer() {
      const b = await r.get(POINTER_KEY);
      return b && parseJsonFile(Pointer, b, `${r.description.replace(/\/?$/, '/')}${POINTER_KEY}`);
    },
    async manifest(ref) {
      const key = manifestKey(ref);
      const where = `${r.description.replace(/\/?$/, '/')}${key}`;
      const stored = await r.get(key);
      if (!stored) throw new IntegrityError(`${where} is missing`);
      let bytes: Buffer;
      try {
        bytes = unpackManifest(stored, ref.bytes ?? MAX_MANIFEST_BYTES);
      } catch (e) {
        throw new IntegrityError(`${where} cannot be unpacked: ${(e as Error).message}`);
      }
      checkBytes(bytes, where, ref.sha256, ref.bytes);
      const manifest = parseJsonFile(Manifest, bytes, where);
      if (manifest.publicationRevision !== ref.revision)
        throw new IntegrityError(`${key} is the manifest of ${manifest.publicationRevision}, not of ${ref.revision}`);
      return { manifest, bytes };
    },
    object: (sha256, bytes) => getVerified(r, objectKey(sha256), sha256, bytes),
    close: () => r.close(),
  };
}

/**
 * The publication at `url`: file:///PATH, s3://BUCKET/PREFIX (credentials from the AWS chain; `o` takes --endpoint,
 * --region, path style), or http(s)://HOST/PREFIX/ for a public bucket, static host or CDN (read with node:http, so
 * bytes arrive as stored).
 */
export async function readRemote(url: string, o: RemoteOptions = {}): Promise<Remote> {
  return remoteOn(await openReader(url, o));
}
