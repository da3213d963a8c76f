// The manifest as a gateway keeps it for the life of a publication: 75,000 entries on the default publication, of
// which a day's traffic touches a few thousand. Rows live in typed arrays (hashes as 32 bytes, sizes as numbers, the
// few distinct content types, revisions and dates as indices) and an entry object is made only when a path is asked
// for, once (Publication caches what it derives from it). A smaller heap makes each garbage collection cheaper:
// a manifest of 75,000 entries held as objects was most of the gateway's idle heap.
import type { BodyRepresentations, ManifestEntry } from '../publication/files.js';
import { encodedFile } from '../publication/layout.js';

const HEX_SHA256 = /^[0-9a-f]{64}$/;

export class ManifestIndex {
  private readonly rows = new Map<string, number>();
  private readonly hashes: Buffer;
  /** Hashes that are not 64 lowercase hex digits (the schema allows any string): kept as given. */
  private readonly oddHashes = new Map<number, string>();
  private readonly sizes: Float64Array;
  /** Per row: content type, revision, last modified, as indices into `strings`. */
  private readonly refs: Uint32Array;
  private readonly strings: string[] = [];

  constructor(files: readonly ManifestEntry[]) {
    this.hashes = Buffer.alloc(32 * files.length);
    this.sizes = new Float64Array(files.length);
    this.refs = new Uint32Array(3 * files.length);
    const index = new Map<string, number>();
    const ref = (s: string) => {
      let i = index.get(s);
      if (i === undefined) index.set(s, (i = this.strings.push(s) - 1));
      return i;
    };
    files.forEach((f, row) => {
      this.rows.set(f.path, row);
      if (HEX_SHA256.test(f.sha256)) this.hashes.write(f.sha256, 32 * row, 'hex');
      else this.oddHashes.set(row, f.sha256);
      this.sizes[row] = f.bytes;
      this.refs[3 * row] = ref(f.content_type);
      this.refs[3 * row + 1] = ref(f.revision);
      this.refs[3 * row + 2] = ref(f.last_modified);
    });
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

/** A stored br or gzip representation of a body: where it is in the release, its hash and size. */
export interface EncodedInfo {
  path: string;
  sha256: string;
  bytes: number;
}
export interface EncodedPair {
  br: EncodedInfo;
  gzip: EncodedInfo;
}

/**
 * The manifest's representations (identity sha256 -> br and gzip sha256 and size), compactly as ManifestIndex keeps
 * the files: 30,000 bodies on the default publication, of which a day's traffic asks for a few thousand.
 */
export class RepresentationIndex {
  private readonly rows = new Map<string, number>();
  private readonly hashes: Buffer;
  private readonly sizes: Float64Array;

  constructor(representations: Readonly<Record<string, BodyRepresentations>>) {
    const list = Object.entries(representations);
    this.hashes = Buffer.alloc(64 * list.length);
    this.sizes = new Float64Array(2 * list.length);
    list.forEach(([identity, r], row) => {
      this.rows.set(identity, row);
      this.hashes.write(r.br.sha256, 64 * row, 'hex');
      this.hashes.write(r.gzip.sha256, 64 * row + 32, 'hex');
      this.sizes[2 * row] = r.br.bytes;
      this.sizes[2 * row + 1] = r.gzip.bytes;
    });
  }

  /** The representations of the body with this identity sha256, or null (an artifact, or an older publication). */
  get(identity: string): EncodedPair | null {
    const row = this.rows.get(identity);
    if (row === undefined) return null;
    const at = (k: number, coding: 'br' | 'gzip'): EncodedInfo => ({
      path: encodedFile(identity, coding),
      sha256: this.hashes.toString('hex', 64 * row + 32 * k, 64 * row + 32 * k + 32),
      bytes: this.sizes[2 * row + k]!,
    });
    return { br: at(0, 'br'), gzip: at(1, 'gzip') };
  }
}
