// The manifest as a gateway keeps it for the life of a publication: 75,000 entries on the default publication, of
// which a day's traffic touches a few thousand. Rows live in typed arrays (hashes as 32 bytes, sizes as numbers, the
// few distinct content types, revisions and dates as indices) and an entry object is made only when a path is asked
// for, once (Publication caches what it derives from it). A smaller heap makes each garbage collection cheaper:
// a manifest of 75,000 entries held as objects was most of the gateway's idle heap.
import type { ManifestEntry, Manifest } from '../publication/files.js';
import { SHA256_HEX_RE } from '../schema/primitives.js';
import { packedRepresentations, type StoredBytes } from '../publication/layout.js';

/** Rows indexed between two turns of the event loop. */
const SLICE = 4096;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class ManifestIndex {
  private readonly rows = new Map<string, number>();
  private readonly hashes: Buffer;
  /** Hashes that are not 64 lowercase hex digits (the schema allows any string): kept as given. */
  private readonly oddHashes = new Map<number, string>();
  private readonly sizes: Float64Array;
  /** Per row: content type, revision, last modified, as indices into `strings`. */
  private readonly refs: Uint32Array;
  private readonly strings: string[] = [];

  private constructor(files: readonly ManifestEntry[]) {
    this.hashes = Buffer.alloc(32 * files.length);
    this.sizes = new Float64Array(files.length);
    this.refs = new Uint32Array(3 * files.length);
    this.files = files;
  }

  /** The index of `files`, made a slice at a time with a turn of the event loop between two (requests go on). */
  static async of(files: readonly ManifestEntry[]): Promise<ManifestIndex> {
    const index = new ManifestIndex(files);
    for (let from = 0; from < files.length; from += SLICE) {
      index.fill(from, Math.min(files.length, from + SLICE));
      await nextTurn();
    }
    index.files = [];
    return index;
  }

  /** The index of `files`, made at once. */
  static now(files: readonly ManifestEntry[]): ManifestIndex {
    const index = new ManifestIndex(files);
    index.fill(0, files.length);
    index.files = [];
    return index;
  }

  private files: readonly ManifestEntry[];
  private readonly stringIndex = new Map<string, number>();
  private fill(from: number, to: number): void {
    const ref = (s: string) => {
      let i = this.stringIndex.get(s);
      if (i === undefined) this.stringIndex.set(s, (i = this.strings.push(s) - 1));
      return i;
    };
    for (let row = from; row < to; row++) {
      const f = this.files[row]!;
      this.rows.set(f.path, row);
      if (SHA256_HEX_RE.test(f.sha256)) this.hashes.write(f.sha256, 32 * row, 'hex');
      else this.oddHashes.set(row, f.sha256);
      this.sizes[row] = f.bytes;
      this.refs[3 * row] = ref(f.content_type);
      this.refs[3 * row + 1] = ref(f.revision);
      this.refs[3 * row + 2] = ref(f.last_modified);
    }
  }

  get size(): number {
    return this.rows.size;
  }

  /** The entry of a path, as the manifest lists it; a new object on each call. */
  get(path: string): ManifestEntry | undefined {
    const row = this.rows.get(path);
    if (row === undefined) return undefined;
    return {
      path,
      sha256: this.oddHashes.get(row) ?? this.hashes.toString('hex', 32 * row, 32 * row + 32),
      bytes: this.sizes[row]!,
      content_type: this.strings[this.refs[3 * row]!]!,
      revision: this.strings[this.refs[3 * row + 1]!]!,
      last_modified: this.strings[this.refs[3 * row + 2]!]!,
    };
  }
}

/** A body's stored br and gzip representations: where each is in the release, its hash and size. */
export interface EncodedPair {
  br: StoredBytes;
  gzip: StoredBytes;
}

/**
 * The manifest's representations (identity sha256 -> br and gzip sha256, size and place in their pack), compactly as
 * ManifestIndex keeps the files: 30,000 bodies on the default publication, of which a day's traffic asks for a few
 * thousand.
 */
export class RepresentationIndex {
  private readonly rows = new Map<string, number>();
  private readonly hashes: Buffer;
  /** Per row: br offset, br size, gzip offset, gzip size. */
  private readonly places: Float64Array;
  /** Per row: its pack, an index into `packs`. */
  private readonly packOf: Uint32Array;
  private readonly packs: string[] = [];

  private constructor(count: number) {
    this.hashes = Buffer.alloc(64 * count);
    this.places = new Float64Array(4 * count);
    this.packOf = new Uint32Array(count);
  }

  /**
   * The index of a manifest's representations (null when it has none), made a slice at a time with a turn of the
   * event loop between two (requests go on).
   */
  static async of(manifest: Pick<Manifest, 'representations' | 'packs'>): Promise<RepresentationIndex | null> {
    const { representations, packs } = manifest;
    if (!representations) return null;
    const index = new RepresentationIndex(Object.keys(representations).length);
    const packIndex = new Map<string, number>();
    let row = 0;
    for (const { identity, br, gzip } of packedRepresentations(representations, packs)) {
      let pack = packIndex.get(br.path);
      if (pack === undefined) packIndex.set(br.path, (pack = index.packs.push(br.path) - 1));
      index.rows.set(identity, row);
      index.hashes.write(br.sha256, 64 * row, 'hex');
      index.hashes.write(gzip.sha256, 64 * row + 32, 'hex');
      index.places.set([br.offset, br.bytes, gzip.offset, gzip.bytes], 4 * row);
      index.packOf[row] = pack;
      if (++row % SLICE === 0) await nextTurn();
    }
    return index;
  }

  /** The representations of the body with this identity sha256, or null (an artifact, or an older publication). */
  get(identity: string): EncodedPair | null {
    const row = this.rows.get(identity);
    if (row === undefined) return null;
    const at = (k: number): StoredBytes => ({
      path: this.packs[this.packOf[row]!]!,
      sha256: this.hashes.toString('hex', 64 * row + 32 * k, 64 * row + 32 * k + 32),
      offset: this.places[4 * row + 2 * k]!,
      bytes: this.places[4 * row + 2 * k + 1]!,
    });
    return { br: at(0), gzip: at(1) };
  }
}
