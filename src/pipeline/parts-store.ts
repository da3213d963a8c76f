// Every model's parts as JSON (ModelJson), kept from the last build by the key of what they are made from
// (VariantRenderer.key): a rebuild takes an unchanged model's parts from here instead of rendering and serializing
// them again, so a one-line change renders one model. It is a cache: a store that is missing, unreadable or written
// by other code (any change to modelpub's own modules) is not read, and the build renders every model.
//   <out>/.modelpub-parts   a header (where the index is, and its length), then one record per model and lane
//                           variant, then their index as JSON
// A record is the model's catalog pieces as UTF-8 (render-catalog.ts reads the catalog bodies from them), then the
// rest of its parts (v8-serialized). A rebuild appends the records it renders and a new index to the kept store, and
// points the header at that index once the build is live (a failed build cuts the file back): the records of
// unchanged models are neither copied nor read but for their rest. Once the records no index lists outweigh those
// it lists, the build writes a new store instead, in its staging folder, moved in place once the build is live.
import { readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { INCLUDES } from '../schema/api.js';
import { sha256Hex } from '../publication/integrity.js';
import { PiecesFile } from '../publication/pieces-file.js';
import { type KeptJson, type ModelJson, modelJson } from './inputs.js';
import type { VariantRenderer } from './render.js';
import { CatalogPieces } from './render-catalog.js';

export const PARTS_FILE = '.modelpub-parts';
/** The index's offset and length, each a u64. */
const HEADER = 16;

/** A digest of modelpub's own modules (src/ under the tests, lib/ when compiled): parts made by other code differ. */
let code: string | undefined;
function codeDigest(): string {
  if (code === undefined) {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(js|ts)$/.test(f))
      .sort();
    code = sha256Hex(files.map((f) => `${f}\n${sha256Hex(readFileSync(path.join(root, f)))}`).join('\n'));
  }
  return code;
}

type Texts = Pick<ModelJson, 'detail' | 'sections'>;

/** What a record holds besides its catalog pieces: the rest of the parts, and how to cut the pieces back apart. */
interface Rest {
  json: KeptJson;
  /** Each catalog piece's bytes, in CatalogPieces.append's order. */
  sizes: number[];
  /** Each include section's length in the sections piece (`,<benchmarks>,<capabilities>,<pricing>}`). */
  sections: number[];
}

interface Index {
  code: string;
  /** key -> [offset, length] of its record, and the length of its rest (its last bytes). */
  entries: Record<string, [number, number, number]>;
}

/** A model's parts, and where its catalog pieces are in the store's file. */
export interface StoredModel {
  json: KeptJson;
  pieces: Float64Array;
  /** The detail and sections JSON, read from the file when a body that shows them is made (most are carried over). */
  texts(): Texts;
}

export class PartsStore {
  /** How many models' parts were taken from the kept store, and how many were rendered. */
  reused = 0;
  rendered = 0;
  private readonly entries: Index['entries'] = {};
  private closed = false;
  private committed = false;
  /** A new store once finished, until it is committed. */
  private next: string | null = null;
  /** The header that names the index appended to the kept store, written there once the build is live. */
  private index: Buffer | null = null;

  private constructor(
    /** Where the records are appended; the catalog pieces are read from it (CatalogPieces). */
    readonly file: PiecesFile,
    /** The kept store and its index; `file` itself when the build appends to it, else only read. */
    private readonly kept: { file: PiecesFile; entries: Index['entries']; end: number } | null,
  ) {}

  /**
   * The store kept in `outDir`, if it is one this code wrote: appended to, unless its unlisted records outweigh its
   * listed ones; then a new store is written in `stagingDir`, as when there is none.
   */
  static open(outDir: string, stagingDir: string): PartsStore {
    const kept = readKept(outDir);
    if (kept) {
      const listed = Object.values(kept.entries).reduce((n, [, length]) => n + length, 0);
      if (kept.file.size - listed <= listed) return new PartsStore(kept.file, { ...kept, end: kept.file.size });
    }
    const file = new PiecesFile(stagingDir, PARTS_FILE, 'keep');
    file.append(Buffer.alloc(HEADER)); // no index yet: not a store until finished
    return new PartsStore(file, kept && { ...kept, end: kept.file.size });
  }

  /** A store of this build's parts alone, in a file removed once it is let go (bodies() without a build). */
  static scratch(dir: string): PartsStore {
    return new PartsStore(new PiecesFile(dir, 'parts'), null);
  }

  /** A model's parts in a lane variant: kept ones when its key is in the kept store, else rendered. */
  model(r: VariantRenderer, slug: string): StoredModel {
    const key = r.key(slug);
    const at = this.kept && Object.hasOwn(this.kept.entries, key) ? this.kept.entries[key]! : null;
    let stored: StoredModel | null = null;
    if (at) {
      try {
        stored = this.take(at);
        this.entries[key] = [stored.pieces[0]!, at[1], at[2]];
      } catch {} // a record that does not read back: rendered
    }
    if (stored) {
      this.reused++;
      return stored;
    }
    this.rendered++;
    const { detail, sections, ...json } = modelJson(r.model(slug));
    const start = this.file.size;
    const pieces = CatalogPieces.append(this.file, detail, sections);
    const rest = serialize({
      json,
      sizes: [...pieces.filter((_, i) => i % 2 === 1)],
      sections: INCLUDES.map((i) => sections[i].length),
    } satisfies Rest);
    this.file.append(rest);
    this.entries[key] = [start, this.file.size - start, rest.length];
    return { json, pieces, texts: () => ({ detail, sections }) };
  }

  /**
   * A kept record's parts: its rest read, its texts only when asked for. A build that writes a new store copies the
   * record into it first.
   */
  private take([from, length, restLength]: [number, number, number]): StoredModel {
    const kept = this.kept!;
    if (from + length > kept.end) throw new Error('the parts store was cut short');
    let start = from;
    if (kept.file !== this.file) start = this.file.append(kept.file.read(from, length, 'the parts store'));
    const rest = deserialize(this.file.read(start + length - restLength, restLength, 'the parts store')) as Rest;
    const pieces = new Float64Array(2 * rest.sizes.length);
    let at = start;
    for (const [i, size] of rest.sizes.entries()) {
      pieces.set([at, size], 2 * i);
      at += size;
    }
    if (at !== start + length - restLength) throw new Error('a parts record of other sizes');
    let texts: Texts | null = null;
    return { json: rest.json, pieces, texts: () => (texts ??= CatalogPieces.texts(this.file, pieces, rest.sections)) };
  }

  /**
   * Ends the store: appends its index. A new store is moved out of the staging folder, beside the kept one
   * (`<out>/.modelpub-parts.next`): after every body is written, before the switch, so that no release holds it.
   */
  finish(outDir: string): void {
    const index = Buffer.from(JSON.stringify({ code: codeDigest(), entries: this.entries } satisfies Index));
    const at = this.file.append(index);
    const header = Buffer.alloc(HEADER);
    header.writeBigUInt64BE(BigInt(at));
    header.writeBigUInt64BE(BigInt(index.length), 8);
    if (this.file === this.kept?.file) {
      this.index = header;
      return;
    }
    this.file.write(header, 0);
    this.next = path.join(outDir, `${PARTS_FILE}.next`);
    renameSync(this.file.path, this.next);
  }

  /**
   * Makes the finished store the kept one: once the build is live (a failed build leaves the kept one). Never throws:
   * the build is live whatever happens to a cache; a store not committed is removed or cut back (close), and the next
   * build renders what it cannot take.
   */
  commit(): void {
    try {
      if (this.index) this.file.write(this.index, 0);
      else renameSync(this.next!, path.join(path.dirname(this.next!), PARTS_FILE));
      this.committed = true;
    } catch {}
  }

  /** Cuts the kept store back to what it was, or removes a new one, when the build did not commit it. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.committed) return;
    if (this.kept?.file === this.file) {
      try {
        this.file.truncate(this.kept.end);
      } catch {} // its header still names the kept index: the records past it are never read
    }
    if (this.next) rmSync(this.next, { force: true });
  }
}

/** The kept store, open to be appended to, and its index; null: none, unreadable, or of other code. */
function readKept(outDir: string): { file: PiecesFile; entries: Index['entries'] } | null {
  let file: PiecesFile;
  try {
    file = new PiecesFile(outDir, PARTS_FILE, 'reopen');
  } catch {
    return null;
  }
  try {
    const header = file.read(0, HEADER, 'the parts store');
    const at = Number(header.readBigUInt64BE());
    const index = JSON.parse(file.read(at, Number(header.readBigUInt64BE(8)), 'the parts store').toString()) as Index;
    if (at >= HEADER && index.code === codeDigest()) return { file, entries: index.entries };
  } catch {} // not a store this code can read: the build renders every model
  return null;
}
