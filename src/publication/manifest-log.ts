// The manifest's entries while a build writes its bodies, and manifest.json made from them. A large catalog has
// hundreds of thousands of entries: as objects they were the largest index in the build's heap. Here each entry is
// its JSON, appended to a file in the staging folder as it comes; memory holds its path (bytes in one buffer, to sort
// by), where its JSON is in the file, and whether it was added or changed. manifest.json is then written in path
// order, each entry read back from the file, and hashed as it is written.
import { createHash } from 'node:crypto';
import { readSync } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { namedWriteError } from '../write-file.js';
import type { BodyRepresentations, ChangeList, Manifest, ManifestEntry, PackFile } from './files.js';
import { Column } from './tables.js';

/** What is gathered before one write to the log file, and the buffer manifest.json is written through. */
const CHUNK_BYTES = 4 * 1024 * 1024;
const ADDED = 1;
const CHANGED = 2;

export class ManifestLog {
  /** The paths' UTF-8 bytes end to end; an entry's path is paths[pathStart[i], pathStart[i + 1]). */
  private paths = Buffer.allocUnsafe(1024 * 1024);
  private pathsUsed = 0;
  private readonly pathStart = new Column(new Uint32Array(1024));
  /** Where entry i's JSON is in the file, and how long it is (bytes). */
  private readonly at = new Column(new Float64Array(1024));
  private readonly size = new Column(new Uint32Array(1024));
  private readonly flags = new Column(new Uint32Array(1024));
  private fileSize = 0;
  private chunk: string[] = [];
  private chunkBytes = 0;
  private handle: Promise<FileHandle> | null = null;
  private written: Promise<void> = Promise.resolve();
  private order: Uint32Array | null = null;

  /** `file`: the log, in the staging folder; `previous`: the previous release's entries, to tell added and changed. */
  constructor(
    private readonly file: string,
    private readonly previous: ReadonlyMap<string, ManifestEntry> | null,
  ) {}

  get length(): number {
    return this.size.length;
  }

  /**
   * Adds an entry (a path once). `previous`: the previous release's entry at its path (null: none), when the caller
   * has it at hand; else it is looked up (a lookup makes an entry of a compact table: a rebuild carries 300,000).
   */
  push(entry: ManifestEntry, previous?: ManifestEntry | null): void {
    if (this.order) throw new Error('the manifest log is sealed');
    const json = JSON.stringify(entry);
    const bytes = Buffer.byteLength(json);
    const pathBytes = Buffer.byteLength(entry.path);
    while (this.pathsUsed + pathBytes > this.paths.length) {
      const grown = Buffer.allocUnsafe(this.paths.length * 2);
      this.paths.copy(grown, 0, 0, this.pathsUsed);
      this.paths = grown;
    }
    this.pathStart.push(this.pathsUsed);
    this.pathsUsed += this.paths.write(entry.path, this.pathsUsed);
    this.at.push(this.fileSize);
    this.size.push(bytes);
    const prev = previous === undefined ? this.previous?.get(entry.path) : previous;
    this.flags.push(!prev ? ADDED : prev.sha256 !== entry.sha256 ? CHANGED : 0);
    this.fileSize += bytes;
    this.chunk.push(json);
    this.chunkBytes += bytes;
    if (this.chunkBytes >= CHUNK_BYTES) void this.flush().catch(() => {}); // thrown again by seal()
  }

  private flush(): Promise<void> {
    if (!this.chunkBytes) return this.written;
    const bytes = Buffer.from(this.chunk.join(''));
    const at = this.fileSize - this.chunkBytes;
    [this.chunk, this.chunkBytes] = [[], 0];
    this.handle ??= open(this.file, 'w+');
    const h = this.handle;
    this.written = this.written.then(async () => {
      await (await h).write(bytes, 0, bytes.length, at).catch((e) => Promise.reject(namedWriteError(e, this.file)));
    });
    return this.written;
  }

  private pathEnd(i: number): number {
    return i + 1 < this.pathStart.length ? this.pathStart.values[i + 1]! : this.pathsUsed;
  }

  /** Byte order of two paths (code point order: the order of the JS strings for every path a release has). */
  private compare(a: number, b: number): number {
    const p = this.paths;
    return p.compare(p, this.pathStart.values[b]!, this.pathEnd(b), this.pathStart.values[a]!, this.pathEnd(a));
  }

  /** Ends the log: everything is in its file, and the entries are in path order. */
  async seal(): Promise<void> {
    if (!this.order) {
      const order = new Uint32Array(this.length);
      for (let i = 0; i < order.length; i++) order[i] = i;
      this.order = order.sort((a, b) => this.compare(a, b));
    }
    await this.flush();
  }

  private pathOf(i: number): string {
    return this.paths.toString('utf8', this.pathStart.values[i]!, this.pathEnd(i));
  }

  /** What was added, changed and removed against the previous release, by path (after seal()). */
  changeList(revision: string, previousRevision: string | null): ChangeList {
    const order = this.order!;
    const added: string[] = [];
    const changed: string[] = [];
    for (const i of order) {
      if (this.flags.values[i] === ADDED) added.push(this.pathOf(i));
      else if (this.flags.values[i] === CHANGED) changed.push(this.pathOf(i));
    }
    const removed: string[] = [];
    if (this.previous) for (const p of this.previous.keys()) if (!this.has(p)) removed.push(p);
    removed.sort();
    return { publicationRevision: revision, previousRevision, added, changed, removed };
  }

  /** Whether `path` has an entry: a binary search of the sorted paths. */
  private has(path: string): boolean {
    const key = Buffer.from(path);
    const order = this.order!;
    let [lo, hi] = [0, order.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const i = order[mid]!;
      const c = this.paths.compare(key, 0, key.length, this.pathStart.values[i]!, this.pathEnd(i));
      if (c === 0) return true;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return false;
  }

  /**
   * The entries' JSON in path order, read back from the file (after seal()). Read synchronously: one read per entry
   * from the page cache, where a read through libuv's thread pool costs several times as much.
   */
  async *json(): AsyncGenerator<Buffer> {
    const order = this.order!;
    if (!order.length) return;
    const { fd } = await this.handle!;
    let buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (const i of order) {
      const bytes = this.size.values[i]!;
      if (bytes > buffer.length) buffer = Buffer.allocUnsafe(bytes);
      const bytesRead = readSync(fd, buffer, 0, bytes, this.at.values[i]!);
      if (bytesRead !== bytes) throw new Error(`${this.file} ends before the entry of ${this.pathOf(i)}`);
      yield buffer.subarray(0, bytes);
    }
  }

  /** Closes and removes the file; a build calls it once manifest.json is written, or has failed. */
  async remove(): Promise<void> {
    await this.written.catch(() => {});
    const h = this.handle;
    this.handle = null;
    if (!h) return;
    await (await h.catch(() => null))?.close();
    await rm(this.file, { force: true });
  }
}

/** The manifest's own fields, besides its entries and representations (with their packs). */
export type ManifestHead = Omit<Manifest, 'files' | 'representations' | 'packs'>;

/** A manifest's representations, in the manifest's order (sorted by identity hash), with their pack files. */
export type RepresentationsToWrite = Iterable<readonly [string, BodyRepresentations]> & {
  readonly packs?: readonly PackFile[] | null;
};

/**
 * Writes manifest.json to `out`: the bytes JSON.stringify gives for the manifest of these entries and representations
 * (sorted by identity hash), without holding it. Returns its sha256.
 */
export async function writeManifest(
  out: FileHandle,
  head: ManifestHead,
  log: ManifestLog,
  representations: RepresentationsToWrite | null,
): Promise<string> {
  const hash = createHash('sha256');
  let buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  const flush = async () => {
    hash.update(buffer.subarray(0, used));
    await out.write(buffer, 0, used);
    used = 0;
  };
  const put = async (bytes: Buffer | string) => {
    const b = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
    if (used + b.length > buffer.length) await flush();
    if (b.length > buffer.length) buffer = Buffer.allocUnsafe(b.length);
    b.copy(buffer, used);
    used += b.length;
  };
  const { schemaVersion, publicationRevision, publishedAt, compression } = head;
  await put(`${JSON.stringify({ schemaVersion, publicationRevision, publishedAt }).slice(0, -1)},"files":[`);
  let first = true;
  for await (const entry of log.json()) {
    if (!first) await put(',');
    first = false;
    await put(entry);
  }
  await put(']');
  if (representations?.packs) await put(`,"packs":${JSON.stringify(representations.packs)}`);
  if (representations) {
    await put(',"representations":{');
    first = true;
    for (const [identity, r] of representations) {
      await put(`${first ? '' : ','}${JSON.stringify(identity)}:${JSON.stringify(r)}`);
      first = false;
    }
    await put('}');
  }
  if (compression) await put(`,"compression":${JSON.stringify(compression)}`);
  await put('}');
  await flush();
  return hash.digest('hex');
}
