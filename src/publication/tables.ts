// Compact tables for what a build holds per body: the previous release's manifest entries and representations, and the
// writer's own index of the distinct bodies it wrote. A catalog of 2,000 models has 300,000 paths and 190,000
// distinct bodies; as objects with 64-character hex keys these took hundreds of megabytes of heap. Here a row is a
// number, a sha256 is 32 bytes, a size is a number in a typed array, a repeated string (revision, time, content type)
// a small number, and a path its UTF-8 bytes: the heap holds a few arrays whatever the number of rows.
import type { BodyRepresentations, ManifestEntry, PackFile } from './files.js';
import { type PlacedRepresentations, representationPlacer } from './layout.js';

/** A typed array that grows. */
export class Column<T extends Uint32Array | Float64Array | Uint8Array> {
  length = 0;
  constructor(public values: T) {}
  push(v: number): void {
    this.reserve(this.length + 1);
    this.values[this.length++] = v;
  }
  /** Room for `n` values. */
  reserve(n: number): void {
    if (n <= this.values.length) return;
    const grown = new (this.values.constructor as new (n: number) => T)(Math.max(n, this.values.length * 2));
    grown.set(this.values);
    this.values = grown;
  }
  /** Lets go of the room past the last value (not all of it when empty: it then grows again by doubling). */
  fit(): void {
    if (this.length && this.values.length > this.length) this.values = this.values.slice(0, this.length) as T;
  }
}

/** Bytes that grow: strings end to end, or fixed-width records; past `max`, they grow no more than asked for. */
export class Bytes {
  buffer = Buffer.allocUnsafe(64 * 1024);
  used = 0;
  constructor(private readonly max = Number.POSITIVE_INFINITY) {}
  reserve(n: number): void {
    if (this.used + n <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.used + n, Math.min(this.buffer.length * 2, this.max)));
    this.buffer.copy(grown, 0, 0, this.used);
    this.buffer = grown;
  }
  /** Lets go of the room past the bytes used (not all of it when empty: it then grows again by doubling). */
  fit(): void {
    if (this.used && this.buffer.length > this.used) this.buffer = Buffer.from(this.buffer.subarray(0, this.used));
  }
}

/** Strings of which a table has few distinct ones, each held once and named by its index. */
class Interned {
  private readonly index = new Map<string, number>();
  readonly values: string[] = [];
  id(s: string): number {
    let i = this.index.get(s);
    if (i === undefined) this.index.set(s, (i = this.values.push(s) - 1));
    return i;
  }
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
function stringHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Open addressing: slot -> row + 1 (0: empty), at most half full. */
class Slots {
  table = new Uint32Array(1024);
  get mask(): number {
    return this.table.length - 1;
  }
  /** Room for `rows` rows; `hashOf(row)` places the rows already in when the table grows. */
  reserve(rows: number, hashOf: (row: number) => number): void {
    if (rows * 2 <= this.table.length) return;
    let size = this.table.length;
    while (rows * 2 > size) size *= 2;
    const old = this.table;
    this.table = new Uint32Array(size);
    const mask = size - 1;
    for (const r of old) {
      if (r === 0) continue;
      let i = hashOf(r - 1) & mask;
      while (this.table[i] !== 0) i = (i + 1) & mask;
      this.table[i] = r;
    }
  }
}

/**
 * A set of sha256 digests (64 lowercase hex digits), each with a row number in the order added: what the build keys
 * its per-body columns by.
 */
export class DigestTable {
  private keys = new Uint32Array(8 * 1024);
  private readonly slots = new Slots();
  private readonly scratch = Buffer.alloc(32);
  private readonly words = new Uint32Array(this.scratch.buffer, this.scratch.byteOffset, 8);
  size = 0;

  /** Reads `hex` into the scratch words; its slot is then words[0] (the digest's bytes are uniform). */
  private load(hex: string): void {
    if (hex.length !== 64 || this.scratch.write(hex, 'hex') !== 32) throw new Error(`${hex} is not a sha256`);
  }

  /** The slot of the loaded digest: its row + 1, or the empty slot where it goes (as -1 - slot). */
  private probe(): number {
    const { table, mask } = this.slots;
    const w = this.words;
    const k = this.keys;
    for (let i = w[0]! & mask; ; i = (i + 1) & mask) {
      const r = table[i]!;
      if (r === 0) return -1 - i;
      const at = 8 * (r - 1);
      if (
        k[at] === w[0] &&
        k[at + 1] === w[1] &&
        k[at + 2] === w[2] &&
        k[at + 3] === w[3] &&
        k[at + 4] === w[4] &&
        k[at + 5] === w[5] &&
        k[at + 6] === w[6] &&
        k[at + 7] === w[7]
      )
        return r;
    }
  }

  /** The row of `hex`, or -1. */
  find(hex: string): number {
    this.load(hex);
    const p = this.probe();
    return p > 0 ? p - 1 : -1;
  }

  /** The row of `hex`, added when it is not in the table (a new row is size - 1 after the call). */
  add(hex: string): number {
    this.load(hex);
    let p = this.probe();
    if (p > 0) return p - 1;
    if ((this.size + 1) * 2 > this.slots.table.length) {
      this.slots.reserve(this.size + 1, (row) => this.keys[8 * row]!);
      p = this.probe();
    }
    const row = this.size++;
    if (8 * this.size > this.keys.length) {
      const grown = new Uint32Array(Math.max(8 * this.size, this.keys.length * 2));
      grown.set(this.keys);
      this.keys = grown;
    }
    this.keys.set(this.words, 8 * row);
    this.slots.table[-1 - p] = row + 1;
    return row;
  }

  /** Lets go of the room past the last row's digest (the slots stay: they are what find() probes). */
  fit(): void {
    if (this.keys.length > 8 * this.size) this.keys = this.keys.slice(0, 8 * this.size);
  }

  /** The digest of `row`, as hex. */
  hexOf(row: number): string {
    return Buffer.from(this.keys.buffer, this.keys.byteOffset + 32 * row, 32).toString('hex');
  }

  /** The rows in ascending order of their digests. */
  sorted(): Uint32Array {
    const k = Buffer.from(this.keys.buffer, this.keys.byteOffset, 32 * this.size);
    const first = new Uint32Array(this.size);
    for (let r = 0; r < this.size; r++) first[r] = k.readUInt32BE(32 * r);
    const order = new Uint32Array(this.size);
    for (let r = 0; r < order.length; r++) order[r] = r;
    return order.sort((a, b) =>
      first[a] !== first[b] ? first[a]! - first[b]! : k.compare(k, 32 * b, 32 * b + 32, 32 * a, 32 * a + 32),
    );
  }
}

/** Where `inputs` is: absent, a sha256 in base64url (32 bytes in `inputs`), or any other string (in `oddInputs`). */
const NO_INPUTS = 0;
const DIGEST_INPUTS = 1;
const ODD_INPUTS = 2;

/**
 * A manifest's entries by path, as a ReadonlyMap whose values are made when asked for (a new object on each call,
 * its keys in the schema's order, as a parsed entry has them). Adding a path that is there replaces its entry, as
 * the last of two equal keys does in a Map.
 */
export class ManifestTable implements ReadonlyMap<string, ManifestEntry> {
  private readonly paths = new Bytes();
  private readonly pathStart = new Column(new Float64Array(1024));
  private readonly hashes = new Bytes();
  private readonly sizes = new Column(new Float64Array(1024));
  /** Per row: content type, revision, last modified, as indices into `strings`. */
  private readonly refs = new Column(new Uint32Array(3 * 1024));
  private readonly strings = new Interned();
  private readonly inputsForm = new Column(new Uint8Array(1024));
  private readonly inputs = new Bytes();
  private readonly oddInputs = new Map<number, string>();
  private readonly slots = new Slots();
  private readonly pathHashes = new Column(new Uint32Array(1024));
  private scratch = Buffer.allocUnsafe(1024);

  get size(): number {
    return this.sizes.length;
  }

  /**
   * Lets go of the room its arrays grew for and no row took: a table read from a release, which gets no more rows,
   * held through a whole rebuild (each array grows by doubling: up to half of it room, tens of megabytes at 300,000
   * paths).
   */
  fit(): void {
    const arrays = [
      this.paths,
      this.pathStart,
      this.hashes,
      this.sizes,
      this.refs,
      this.inputsForm,
      this.inputs,
      this.pathHashes,
    ];
    for (const a of arrays) a.fit();
  }

  private pathEnd(row: number): number {
    return row + 1 < this.pathStart.length ? this.pathStart.values[row + 1]! : this.paths.used;
  }

  /** The slot of `path`: its row + 1, or the empty slot where it goes (as -1 - slot). */
  private probe(path: string, h: number): number {
    let n = Buffer.byteLength(path);
    if (n > this.scratch.length) this.scratch = Buffer.allocUnsafe(n * 2);
    n = this.scratch.write(path);
    const { table, mask } = this.slots;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const r = table[i]!;
      if (r === 0) return -1 - i;
      const row = r - 1;
      if (this.pathHashes.values[row] !== h) continue;
      const [s, e] = [this.pathStart.values[row]!, this.pathEnd(row)];
      if (e - s === n && this.scratch.compare(this.paths.buffer, s, e, 0, n) === 0) return r;
    }
  }

  private rowOf(path: string): number {
    const p = this.size === 0 ? 0 : this.probe(path, stringHash(path));
    return p > 0 ? p - 1 : -1;
  }

  /** Adds `e`, or replaces the entry of its path. */
  add(e: ManifestEntry): void {
    const h = stringHash(e.path);
    let p = this.probe(e.path, h);
    let row: number;
    if (p > 0) row = p - 1;
    else {
      if ((this.size + 1) * 2 > this.slots.table.length) {
        this.slots.reserve(this.size + 1, (r) => this.pathHashes.values[r]!);
        p = this.probe(e.path, h);
      }
      row = this.size;
      this.slots.table[-1 - p] = row + 1;
      this.pathHashes.push(h);
      this.pathStart.push(this.paths.used);
      this.paths.reserve(Buffer.byteLength(e.path));
      this.paths.used += this.paths.buffer.write(e.path, this.paths.used);
      this.sizes.push(0);
      this.refs.reserve(3 * this.size);
      this.refs.length = 3 * this.size;
      this.inputsForm.push(NO_INPUTS);
      this.hashes.reserve(32);
      this.hashes.used += 32;
      this.inputs.reserve(32);
      this.inputs.used += 32;
    }
    if (this.hashes.buffer.write(e.sha256, 32 * row, 'hex') !== 32 || e.sha256.length !== 64)
      throw new Error(`${e.path}: sha256 ${e.sha256} is not a sha256`);
    this.sizes.values[row] = e.bytes;
    this.refs.values[3 * row] = this.strings.id(e.content_type);
    this.refs.values[3 * row + 1] = this.strings.id(e.revision);
    this.refs.values[3 * row + 2] = this.strings.id(e.last_modified);
    this.oddInputs.delete(row);
    let form = NO_INPUTS;
    if (e.inputs !== undefined) {
      form = ODD_INPUTS;
      if (e.inputs.length === 43 && this.inputs.buffer.write(e.inputs, 32 * row, 'base64url') === 32) {
        if (this.inputs.buffer.toString('base64url', 32 * row, 32 * row + 32) === e.inputs) form = DIGEST_INPUTS;
      }
      if (form === ODD_INPUTS) this.oddInputs.set(row, e.inputs);
    }
    this.inputsForm.values[row] = form;
  }

  private entryAt(row: number, path?: string): ManifestEntry {
    const s = this.strings.values;
    const form = this.inputsForm.values[row];
    const e: ManifestEntry = {
      path: path ?? this.paths.buffer.toString('utf8', this.pathStart.values[row], this.pathEnd(row)),
      sha256: this.hashes.buffer.toString('hex', 32 * row, 32 * row + 32),
      bytes: this.sizes.values[row]!,
      content_type: s[this.refs.values[3 * row]!]!,
      revision: s[this.refs.values[3 * row + 1]!]!,
      last_modified: s[this.refs.values[3 * row + 2]!]!,
    };
    if (form === DIGEST_INPUTS) e.inputs = this.inputs.buffer.toString('base64url', 32 * row, 32 * row + 32);
    else if (form === ODD_INPUTS) e.inputs = this.oddInputs.get(row)!;
    return e;
  }

  get(path: string): ManifestEntry | undefined {
    const row = this.rowOf(path);
    return row < 0 ? undefined : this.entryAt(row, path);
  }

  has(path: string): boolean {
    return this.rowOf(path) >= 0;
  }

  /** The latest last_modified of any entry (each distinct time is compared once). */
  latestLastModified(): string | null {
    const seen = new Set<number>();
    for (let r = 0; r < this.size; r++) seen.add(this.refs.values[3 * r + 2]!);
    let latest: string | null = null;
    for (const i of seen) {
      const t = this.strings.values[i]!;
      if (latest === null || t > latest) latest = t;
    }
    return latest;
  }

  *keys(): MapIterator<string> {
    for (let r = 0; r < this.size; r++)
      yield this.paths.buffer.toString('utf8', this.pathStart.values[r], this.pathEnd(r));
  }
  *values(): MapIterator<ManifestEntry> {
    for (let r = 0; r < this.size; r++) yield this.entryAt(r);
  }
  *entries(): MapIterator<[string, ManifestEntry]> {
    for (let r = 0; r < this.size; r++) {
      const e = this.entryAt(r);
      yield [e.path, e];
    }
  }
  [Symbol.iterator](): MapIterator<[string, ManifestEntry]> {
    return this.entries();
  }
  forEach(f: (value: ManifestEntry, key: string, map: ReadonlyMap<string, ManifestEntry>) => void): void {
    for (const [k, v] of this.entries()) f(v, k, this);
  }
}

/** Strings end to end (paths), each named by its index. */
export class StringColumn {
  private readonly bytes = new Bytes();
  private readonly starts = new Column(new Float64Array(1024));
  get length(): number {
    return this.starts.length;
  }
  push(s: string): void {
    this.starts.push(this.bytes.used);
    this.bytes.reserve(Buffer.byteLength(s));
    this.bytes.used += this.bytes.buffer.write(s, this.bytes.used);
  }
  at(i: number): string {
    const end = i + 1 < this.starts.length ? this.starts.values[i + 1]! : this.bytes.used;
    return this.bytes.buffer.toString('utf8', this.starts.values[i], end);
  }
}

/** A body's representations as its pack holds them: where each is, its hash and size. */
export interface PackedRepresentations extends PlacedRepresentations {
  /** The row of the identity sha256 in the table. */
  row: number;
  identity: string;
}

/** A row's pack when the manifest lists none (offsets implied: layout.ts). */
const UNPLACED = 0xffffffff;

/**
 * A manifest's representations (identity sha256 -> br and gzip sha256 and size, and their pack and offset), with its
 * pack list, as ManifestTable keeps files.
 */
export class RepresentationTable {
  private readonly identities = new DigestTable();
  /** Per row: the br then the gzip sha256. */
  private readonly hashes = new Bytes();
  /** Per row: br size, gzip size. */
  private readonly sizes = new Column(new Float64Array(2 * 1024));
  /** Per row: the pack (an index into `packs`, or UNPLACED) and the offset of the br bytes in it. */
  private readonly packOf = new Column(new Uint32Array(1024));
  private readonly offsets = new Column(new Float64Array(1024));
  /** The manifest's `packs`; null for a manifest without (one REPRESENTATIONS_FILE, offsets implied). */
  packs: PackFile[] | null = null;

  get size(): number {
    return this.identities.size;
  }

  /** As ManifestTable.fit. */
  fit(): void {
    this.identities.fit();
    for (const c of [this.hashes, this.sizes, this.packOf, this.offsets]) c.fit();
  }

  /** Adds the representations of `identity`, or replaces them. */
  add(identity: string, r: BodyRepresentations): void {
    this.set(this.start(identity), r);
  }

  /** The row of `identity`, added (its representations to be set) when it is not in the table. */
  start(identity: string): number {
    const row = this.identities.add(identity);
    if (row === this.packOf.length) {
      this.sizes.push(0);
      this.sizes.push(0);
      this.packOf.push(UNPLACED);
      this.offsets.push(0);
      this.hashes.reserve(64);
      this.hashes.used += 64;
    }
    return row;
  }

  /** Sets the representations of row `row` (and its place, when `r` has one). */
  set(row: number, r: BodyRepresentations): void {
    this.hashes.buffer.write(r.br.sha256, 64 * row, 'hex');
    this.hashes.buffer.write(r.gzip.sha256, 64 * row + 32, 'hex');
    this.sizes.values[2 * row] = r.br.bytes;
    this.sizes.values[2 * row + 1] = r.gzip.bytes;
    this.packOf.values[row] = r.pack ?? UNPLACED;
    this.offsets.values[row] = r.offset ?? 0;
  }

  /** Places row `row` in pack `pack` at `offset`. */
  place(row: number, pack: number, offset: number): void {
    this.packOf.values[row] = pack;
    this.offsets.values[row] = offset;
  }

  /** The row of `identity`, or -1. */
  rowOf(identity: string): number {
    return this.identities.find(identity);
  }

  /** The br and gzip sizes of row `row`, together. */
  bytesOf(row: number): number {
    return this.sizes.values[2 * row]! + this.sizes.values[2 * row + 1]!;
  }

  /** The representations of row `row`, as the manifest lists them. */
  at(row: number): BodyRepresentations {
    const sha = (k: number) => this.hashes.buffer.toString('hex', 64 * row + 32 * k, 64 * row + 32 * k + 32);
    const r: BodyRepresentations = {
      br: { sha256: sha(0), bytes: this.sizes.values[2 * row]! },
      gzip: { sha256: sha(1), bytes: this.sizes.values[2 * row + 1]! },
    };
    const pack = this.packOf.values[row]!;
    if (pack !== UNPLACED) [r.pack, r.offset] = [pack, this.offsets.values[row]!];
    return r;
  }

  get(identity: string): BodyRepresentations | undefined {
    const row = this.rowOf(identity);
    return row < 0 ? undefined : this.at(row);
  }

  /** The rows in ascending identity sha256: the manifest's order. */
  sorted(): Uint32Array {
    return this.identities.sorted();
  }

  /** The identity sha256 of row `row`. */
  identityOf(row: number): string {
    return this.identities.hexOf(row);
  }

  /** Each identity with its representations, in the manifest's order. */
  *[Symbol.iterator](): Generator<readonly [string, BodyRepresentations]> {
    for (const row of this.sorted()) yield [this.identities.hexOf(row), this.at(row)] as const;
  }

  /**
   * Each body's representations and where they are (layout.ts representationPlacer), in ascending identity sha256;
   * throws on a row whose place the pack list contradicts. `files` receives the pack files once all are placed.
   */
  *packed(files?: (packs: PackFile[]) => void): Generator<PackedRepresentations> {
    const placer = representationPlacer(this.packs);
    for (const row of this.sorted()) {
      const identity = this.identities.hexOf(row);
      yield { row, identity, ...placer.place(identity, this.at(row)) };
    }
    files?.(placer.packFiles());
  }

  /** The pack files: the manifest's list, or the one REPRESENTATIONS_FILE with the size of every row. */
  packFiles(): PackFile[] {
    if (this.packs) return [...this.packs];
    let files: PackFile[] = [];
    for (const _ of this.packed((f) => (files = f)));
    return files;
  }

  /** The first row whose place the pack list contradicts, as an error message (null: none). */
  misplaced(): string | null {
    try {
      for (const _ of this.packed());
      return null;
    } catch (e) {
      return (e as Error).message;
    }
  }

  /** A record of them all (for a caller that needs the manifest's own form). */
  static of(
    record: Readonly<Record<string, BodyRepresentations>>,
    packs?: readonly PackFile[] | undefined,
  ): RepresentationTable {
    const t = new RepresentationTable();
    for (const [k, v] of Object.entries(record)) t.add(k, v);
    t.packs = packs ? [...packs] : null;
    return t;
  }
}
