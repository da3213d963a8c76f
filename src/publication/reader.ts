// Reading a release back, checked against its schemas: the gateway (from a folder or a static host) and the next
// build (its previous release) read through here, so neither trusts a file it did not check.
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { Attribution } from '../schema/api.js';
import { ListArtifact, Manifest, PublicationMeta } from './files.js';
import { MANIFEST_FILE, META_FILE } from './layout.js';

export interface ReleaseFiles {
  manifest: Manifest;
  meta: PublicationMeta;
}

/** `read` gives a release file's bytes; `where` names a file of the release in errors. */
export async function readRelease(
  read: (file: string) => Promise<Buffer>,
  where: (file: string) => string,
  { verifyManifestHash = false } = {},
): Promise<ReleaseFiles> {
  const [manifestBytes, metaBytes] = await Promise.all([read(MANIFEST_FILE), read(META_FILE)]);
  const manifest = parseJsonFile(Manifest, manifestBytes, where(MANIFEST_FILE));
  const meta = parseJsonFile(PublicationMeta, metaBytes, where(META_FILE));
  if (meta.publicationRevision !== manifest.publicationRevision)
    throw new Error(`${where(MANIFEST_FILE)} and ${META_FILE} disagree on the revision`);
  // From a remote host the two files may come from two builds of one revision (an upload under way): the hash
  // publication.json gives its manifest tells.
  if (
    verifyManifestHash &&
    meta.manifestSha256 !== undefined &&
    createHash('sha256').update(manifestBytes).digest('hex') !== meta.manifestSha256
  ) {
    throw new Error(`${where(MANIFEST_FILE)} is not the one ${META_FILE} names (the host is switching publications)`);
  }
  return { manifest, meta };
}

/** Artifacts of releases written before artifacts carried the attribution lack it: the reader takes the release's. */
const ArtifactAsRead = ListArtifact.extend({ attribution: Attribution.optional() });
export type ArtifactAsRead = z.infer<typeof ArtifactAsRead>;
/**
 * The artifact as written, once checked: zod's output would list each object's keys in schema order, and a composed
 * page must keep the key order of the build's bytes to equal a prebuilt one (the schema has no defaults or transforms).
 */
export const parseArtifact = (bytes: Buffer, where: string): ArtifactAsRead =>
  parseJsonFile(ArtifactAsRead, bytes, where, { keepInput: true });

/** A JSON file checked against its schema, with an error that names the file, the field and the reason. */
export function parseJsonFile<T>(
  schema: z.ZodType<T>,
  bytes: Buffer | string,
  where: string,
  { keepInput = false } = {},
): T {
  let doc: unknown;
  try {
    doc = JSON.parse(typeof bytes === 'string' ? bytes : bytes.toString('utf8'));
  } catch (e) {
    throw new Error(`${where}: not JSON (${(e as Error).message})`);
  }
  const r = schema.safeParse(doc);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`${where}: ${i.path.join('.') || '(top)'}: ${i.message}`);
  }
  return keepInput ? (doc as T) : r.data;
}
