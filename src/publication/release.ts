// What reading a publication gives, wherever it is (source.ts opens one): a Source polls for the live publication and
// opens a Release, which is checked once when opened (its two files agree on the revision, manifest.json is the one
// publication.json names) and checks every body read through it against the size and sha256 its manifest lists.
// A folder (folder.ts) and the remote layout (remote-source.ts) differ only in how they fetch bytes.
import { checkBytes, IntegrityError, sha256Hex } from './integrity.js';
import type { Manifest, PublicationMeta } from './files.js';
import { MANIFEST_FILE, META_FILE, type StoredBytes } from './layout.js';
import type { IndexedManifest } from './reader.js';
import { ManifestTable, RepresentationTable } from './tables.js';
import type { GetOptions, ReadBounds } from './targets/types.js';

export interface Source {
  /** Where it is, for messages: the folder or the URL (never credentials). */
  readonly description: string;
  /** Why currentId() is null, in a sentence a command can say: nothing is published there. */
  readonly nothingPublished: string;
  /**
   * An id of the live publication, cheap to poll: a new id means a new publication was switched in. Null when
   * nothing is published there.
   */
  currentId(): Promise<string | null>;
  /** The live publication, opened; null when nothing is published there. */
  live(): Promise<Release | null>;
  /** The live publication as a build reads the one it continues from (IndexedRelease); null when there is none. */
  liveIndexed(): Promise<IndexedRelease | null>;
  /** Publication `id`, as currentId() named it, opened. */
  release(id: string): Promise<Release>;
  /**
   * The ids of the publications kept besides the live one (what a rollback may return to), the most recently live
   * first, as the last currentId() saw them: what a reader falls back to when the live one cannot be read. None for a
   * folder.
   */
  kept(): string[];
  close(): Promise<void>;
}

/**
 * A release with its manifest in compact tables (tables.ts), its bytes not kept: what a build holds of the release it
 * continues from, which at 2,000 models has 300,000 entries (a 140 MB manifest.json).
 */
export interface IndexedRelease {
  readonly id: string;
  /** Where it is, for messages. */
  readonly where: string;
  /** Its folder on this disk (a build hard-links its unchanged files); null for a remote one. */
  readonly dir: string | null;
  /** The manifest's own fields (its entries and representations aside). */
  readonly head: IndexedManifest['head'];
  /** The manifest's entries by path. */
  readonly files: ManifestTable;
  /** Its representations; null when it has none (built with --no-compression). */
  readonly representations: RepresentationTable | null;
  readonly meta: PublicationMeta;
  /** The sha256 of its manifest.json (the one publication.json names). */
  readonly manifestSha256: string;
  /**
   * The bytes of a body or representation its manifest lists, checked against their size and sha256; read within
   * the source's bounds (deadline, minimum rate) unless `bounds` gives others.
   */
  read(stored: StoredBytes, bounds?: ReadBounds): Promise<Buffer>;
  /** The body at `path`, checked; null when the manifest lists no such path. */
  file(path: string): Promise<Buffer | null>;
}

/** A release with its whole manifest: what the gateway, publish and diff read. */
export interface Release extends IndexedRelease {
  readonly manifest: Manifest;
  /** manifest.json as its build wrote it. */
  readonly manifestBytes: Buffer;
}

/** What a kind of source gives to open a release with: its two files, read and parsed, and how to fetch bytes. */
export interface ReleaseParts {
  id: string;
  where: string;
  dir: string | null;
  manifest: Manifest;
  meta: PublicationMeta;
  manifestBytes: Buffer;
  /** Set when the source has already checked manifestBytes against this hash (the pointer names it). */
  manifestSha256?: string;
  /** The stored bytes, read within `bounds`; null when they are not there. */
  fetch(stored: StoredBytes, bounds: GetOptions): Promise<Buffer | null>;
  /** Where `stored` is, for messages. */
  whereOf(stored: StoredBytes): string;
}

/** The checks of a release's two files against each other: the same revision, and the manifest publication.json names. */
function checkPair(where: string, meta: PublicationMeta, manifestRevision: string, manifestSha256: string): void {
  if (meta.publicationRevision !== manifestRevision)
    throw new IntegrityError(
      `${where}: ${MANIFEST_FILE} and ${META_FILE} disagree on the revision ` +
        `(${manifestRevision}, ${meta.publicationRevision})`,
    );
  // Two builds of one revision (a remote host switching, or a release changed after its build) are told apart here.
  if (manifestSha256 !== meta.manifestSha256)
    throw new IntegrityError(
      `${where}: ${MANIFEST_FILE} has sha256 ${manifestSha256}, not the ${meta.manifestSha256} ${META_FILE} names: ` +
        "it is not this publication's manifest",
    );
}

/** Reads of a release's bytes, checked against the size and sha256 its manifest lists. */
function reader(p: Pick<ReleaseParts, 'fetch' | 'whereOf'>, files: () => ManifestTable) {
  const read = async (stored: StoredBytes, bounds?: ReadBounds) => {
    // Every body read is bounded here: by the size the manifest lists, so a damaged store cannot fill memory.
    const b = await p.fetch(stored, { ...bounds, maxBytes: stored.bytes });
    const where = p.whereOf(stored);
    if (!b) throw new IntegrityError(`${where} is missing`);
    checkBytes(b, where, stored.sha256, stored.bytes);
    return b;
  };
  return {
    read,
    async file(path: string) {
      const entry = files().get(path);
      return entry ? read(entry) : null;
    },
  };
}

/** A release whose two files are checked against each other; its reads are checked against the manifest. */
export function openRelease(p: ReleaseParts): Release {
  const manifestSha256 = p.manifestSha256 ?? sha256Hex(p.manifestBytes);
  checkPair(p.where, p.meta, p.manifest.publicationRevision, manifestSha256);
  // Made when first asked for: the gateway has its own index.
  let files: ManifestTable | null = null;
  let representations: RepresentationTable | null | undefined;
  const table = () => {
    if (!files) {
      files = new ManifestTable();
      for (const f of p.manifest.files) files.add(f);
    }
    return files;
  };
  const { files: _, representations: __, packs: ___, ...head } = p.manifest;
  return {
    id: p.id,
    where: p.where,
    dir: p.dir,
    manifest: p.manifest,
    head,
    get files() {
      return table();
    },
    get representations() {
      if (representations === undefined)
        representations = p.manifest.representations
          ? RepresentationTable.of(p.manifest.representations, p.manifest.packs)
          : null;
      return representations;
    },
    meta: p.meta,
    manifestBytes: p.manifestBytes,
    manifestSha256,
    ...reader(p, table),
  };
}

/** What a kind of source gives to open an indexed release with: its manifest read into tables, and its bytes. */
export type IndexedReleaseParts = Omit<ReleaseParts, 'manifest' | 'manifestBytes' | 'manifestSha256'> & {
  manifest: IndexedManifest;
};

/** An IndexedRelease, checked as openRelease checks a Release. */
export function openIndexedRelease(p: IndexedReleaseParts): IndexedRelease {
  const { head, files, representations, sha256 } = p.manifest;
  checkPair(p.where, p.meta, head.publicationRevision, sha256);
  return {
    id: p.id,
    where: p.where,
    dir: p.dir,
    head,
    files,
    representations,
    meta: p.meta,
    manifestSha256: sha256,
    ...reader(p, () => files),
  };
}
