// What reading a publication gives, wherever it is (source.ts opens one): a Source polls for the live publication and
// opens a Release, which is checked once when opened (its two files agree on the revision, manifest.json is the one
// publication.json names) and checks every body read through it against the size and sha256 its manifest lists.
// A folder (folder.ts) and the remote layout (remote-source.ts) differ only in how they fetch bytes.
import { checkBytes, IntegrityError, sha256Hex } from './integrity.js';
import type { Manifest, ManifestEntry, PublicationMeta } from './files.js';
import { MANIFEST_FILE, META_FILE, type StoredBytes } from './layout.js';
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

export interface Release {
  readonly id: string;
  /** Where it is, for messages. */
  readonly where: string;
  /** Its folder on this disk (a build hard-links its unchanged files); null for a remote one. */
  readonly dir: string | null;
  readonly manifest: Manifest;
  /** The manifest's entries by path. */
  readonly files: ReadonlyMap<string, ManifestEntry>;
  readonly meta: PublicationMeta;
  /** manifest.json as its build wrote it, and its sha256 (the one publication.json names). */
  readonly manifestBytes: Buffer;
  readonly manifestSha256: string;
  /**
   * The bytes of a body or representation its manifest lists, checked against their size and sha256; read within
   * the source's bounds (deadline, minimum rate) unless `bounds` gives others.
   */
  read(stored: StoredBytes, bounds?: ReadBounds): Promise<Buffer>;
  /** The body at `path`, checked; null when the manifest lists no such path. */
  file(path: string): Promise<Buffer | null>;
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

/** A release whose two files are checked against each other; its reads are checked against the manifest. */
export function openRelease(p: ReleaseParts): Release {
  if (p.meta.publicationRevision !== p.manifest.publicationRevision)
    throw new IntegrityError(
      `${p.where}: ${MANIFEST_FILE} and ${META_FILE} disagree on the revision ` +
        `(${p.manifest.publicationRevision}, ${p.meta.publicationRevision})`,
    );
  const manifestSha256 = p.manifestSha256 ?? sha256Hex(p.manifestBytes);
  // Two builds of one revision (a remote host switching, or a release changed after its build) are told apart here.
  if (manifestSha256 !== p.meta.manifestSha256)
    throw new IntegrityError(
      `${p.where}: ${MANIFEST_FILE} has sha256 ${manifestSha256}, not the ${p.meta.manifestSha256} ${META_FILE} names: ` +
        "it is not this publication's manifest",
    );
  let byPath: Map<string, ManifestEntry> | null = null; // made when first asked for: the gateway has its own index
  const read = async (stored: StoredBytes, bounds?: ReadBounds) => {
    // Every body read is bounded here: by the size the manifest lists, so a damaged store cannot fill memory.
    const b = await p.fetch(stored, { ...bounds, maxBytes: stored.bytes });
    const where = p.whereOf(stored);
    if (!b) throw new IntegrityError(`${where} is missing`);
    checkBytes(b, where, stored.sha256, stored.bytes);
    return b;
  };
  return {
    id: p.id,
    where: p.where,
    dir: p.dir,
    manifest: p.manifest,
    get files() {
      byPath ??= new Map(p.manifest.files.map((f) => [f.path, f]));
      return byPath;
    },
    meta: p.meta,
    manifestBytes: p.manifestBytes,
    manifestSha256,
    read,
    async file(path) {
      const entry = this.files.get(path);
      return entry ? read(entry) : null;
    },
  };
}
