// A lane's list artifact as the gateway holds it: what the build wrote (orders, per-model items, sections and search
// text) plus what the gateway derives from it once, when the artifact is first needed.
import { createHash, type Hash } from 'node:crypto';
import type { ArtifactModel, ManifestEntry } from '../publication/files.js';
import type { ArtifactAsRead } from '../publication/reader.js';
import type { Include } from '../schema/api.js';
import { httpDate } from './validators.js';

/** A model's list item as UTF-8, a comma in front: whole, and without its closing brace (compose.ts splices sections in). */
export interface ItemPieces {
  full: Buffer;
  open: Buffer;
}

/** An artifact as the gateway holds it: the file's content, and what is derived from it once (on first use). */
export interface LoadedArtifact extends Omit<ArtifactAsRead, 'attribution'> {
  entry: ManifestEntry;
  /** Each model's item as UTF-8 pieces (compose.ts), by locale then slug, made on first use. */
  items: Map<string, Map<string, ItemPieces>>;
  /** Each model's sections as UTF-8 pieces (sectionsJson, a comma in front), by slug, made on first use. */
  sections: Map<string, Record<Include, Buffer>>;
  /** What search reads of each model, by slug, made on first use (compose.ts searchOrder): its name and slug as
   * letters and digits only, whole and from each word on (each after a line feed), and its search fields as the
   * build wrote them (folded name, slug and text per locale). */
  searchIndex: Map<string, { name: string; slug: string; fromWords: string; search: ArtifactModel['search'] }>;
  /** The developers of its models, sorted (compose.ts developersOf), made on first use. */
  developers?: string[];
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
    items: new Map(),
    sections: new Map(),
    searchIndex: new Map(),
    lastModified: httpDate(entry.last_modified),
    attributionJson,
    validatorPrefix,
  };
}
