// A lane's list artifact as the gateway holds it: what the build wrote (orders, per-model items, sections and search
// text) plus the validators every composed answer starts from, made once when it is loaded. What composing derives
// from it on first use (item pieces, the search index) is the composer's (compose.ts).
import { createHash, type Hash } from 'node:crypto';
import type { ManifestEntry } from '../publication/files.js';
import type { ArtifactAsRead } from '../publication/reader.js';
import { httpDate } from './validators.js';

/** An artifact as the gateway holds it: the file's content, its manifest entry and validators. */
export interface LoadedArtifact extends Omit<ArtifactAsRead, 'attribution'> {
  entry: ManifestEntry;
  /** The artifact's Last-Modified as an HTTP date. */
  lastModified: string;
  /** The artifact's attribution as JSON, as every page carries it. */
  attributionJson: string;
  /** SHA-256 fed with the artifact's hash (which covers every byte a page takes from it): each composed answer's
   * validator continues from it with the canonical request. */
  validatorPrefix: Hash;
}

/**
 * The gateway's additions to a list artifact as the build wrote it, made once when it is loaded. Artifacts written
 * before they held the attribution (an older build still being served) take the publication's.
 */
export function loadedArtifact(
  raw: ArtifactAsRead,
  entry: ManifestEntry,
  publicationAttribution: unknown,
): LoadedArtifact {
  const attributionJson = JSON.stringify(raw.attribution ?? publicationAttribution);
  // The artifact's hash covers its own attribution; one taken from the publication must enter the validator itself.
  const validatorPrefix = createHash('sha256').update(
    raw.attribution === undefined ? `${entry.sha256}\n${attributionJson}\n` : `${entry.sha256}\n`,
  );
  return {
    ...raw,
    entry,
    lastModified: httpDate(entry.last_modified),
    attributionJson,
    validatorPrefix,
  };
}
