// Every model's parts as JSON (ModelJson), kept from the last build by the key of what they are made from
// (VariantRenderer.key): a rebuild takes an unchanged model's parts from here instead of rendering and serializing
// them again, so a one-line change renders one model. It is a cache: a store that is missing, unreadable or written
// by other code (any change to modelpub's own modules) is not read, and the build renders every model.
//   <out>/.modelpub-parts   one record per model and lane variant, then their index as JSON, then the index's offset
// A record is the model's catalog pieces as UTF-8 (render-catalog.ts reads the catalog bodies from them), then the
// rest of its parts (v8-serialized), then that part's length. A build writes the next store in its staging folder,
// moves it beside this one once every body is written, and in its place once the build is live.
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { INCLUDES, type Include } from '../schema/api.js';
import { LOCALES, type Locale } from '../schema/source.js';
import { sha256Hex } from '../publication/integrity.js';
import { PiecesFile, readFully } from '../publication/pieces-file.js';
import { type ModelJson, modelJson } from './inputs.js';
import type { VariantRenderer } from './render.js';
import { CatalogPieces } from './render-catalog.js';

export const PARTS_FILE = '.modelpub-parts';
const TRAILER = 8;
const LENGTH = 4;

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

/** What a record holds besides its catalog pieces: the rest of the parts, and how to cut the pieces back apart. */
interface Rest {
  json: Omit<ModelJson, 'detail' | 'sections'>;
  /** Each catalog piece's bytes, in CatalogPieces.append's order. */
  sizes: number[];
  /** Each include section's length in the sections piece (`,<benchmarks>,<capabilities>,<pricing>}`). */
  sections: number[];
}

interface Index {
  code: string;
  /** key -> [offset, length] of its record. */
  entries: Record<string, [number, number]>;
}

/** A model's parts, and where its catalog pieces are in the store's file. */
export interface StoredModel {
  json: ModelJson;
  pieces: Float64Array;
}

export class PartsStore {
  /** How many models' parts were taken from the kept store, and how many were rendered. */
  reused = 0;
  rendered = 0;
  private readonly entries: Index['entries'] = {};
  private scratch = Buffer.alloc(0);
  private closed = false;
  /** The next store once finished, until it is committed. */
  private next: string | null = null;

  private constructor(
    /** Where the next store is written; its catalog pieces are read from it (CatalogPieces). */
    readonly file: PiecesFile,
    private readonly kept: { fd: number; entries: Index['entries'] } | null,
  ) {}

  /** The store kept in `outDir`, if it is one this code wrote, and the next one, written in `stagingDir`. */
  static open(outDir: string, stagingDir: string): PartsStore {
    return new PartsStore(new PiecesFile(stagingDir, PARTS_FILE, true), readKept(path.join(outDir, PARTS_FILE)));
  }

  /** A store of this build's parts alone, in a file removed once it is let go (bodies() without a build). */
  static scratch(dir: string): PartsStore {
    return new PartsStore(new PiecesFile(dir, 'parts'), null);
  }

  /** A model's parts in a lane variant: kept ones when its key is in the kept store, else rendered. */
  model(r: VariantRenderer, slug: string): StoredModel {
    const key = r.key(slug);
    const at = this.kept && Object.hasOwn(this.kept.entries, key) ? this.kept.entries[key]! : null;
    const record = at && this.read(this.kept!.fd, at);
    const start = this.file.size;
    let stored: StoredModel | null = null;
    try {
      stored = record && parse(record, start);
    } catch {} // a record that does not read back: rendered
    if (stored) {
      this.reused++;
      this.file.append(record!);
      this.entries[key] = [start, record!.length];
      return stored;
    }
    this.rendered++;
    const { detail, sections, ...json } = modelJson(r.model(slug));
    const pieces = CatalogPieces.append(this.file, detail, sections);
    const rest = serialize({
      json,
      sizes: [...pieces.filter((_, i) => i % 2 === 1)],
      sections: INCLUDES.map((i) => sections[i].length),
    } satisfies Rest);
    const length = Buffer.alloc(LENGTH);
    length.writeUInt32BE(rest.length);
    this.file.append(Buffer.concat([rest, length]));
    this.entries[key] = [start, this.file.size - start];
    return { json: { ...json, detail, sections }, pieces };
  }

  /** A kept record, in `scratch` (valid until the next read); null if the file was cut short since it was opened. */
  private read(fd: number, [from, size]: [number, number]): Buffer | null {
    if (this.scratch.length < size) this.scratch = Buffer.allocUnsafe(Math.max(size, 2 * this.scratch.length));
    const buf = this.scratch.subarray(0, size);
    try {
      readFully(fd, buf, from, 'the parts store');
    } catch {
      return null;
    }
    return buf;
  }

  /**
   * Ends the next store and moves it out of the staging folder, beside the kept one (`<out>/.modelpub-parts.next`):
   * after every body is written, before the switch, so that no release holds it.
   */
  finish(outDir: string): void {
    const at = this.file.size;
    this.file.append(Buffer.from(JSON.stringify({ code: codeDigest(), entries: this.entries } satisfies Index)));
    const trailer = Buffer.alloc(TRAILER);
    trailer.writeBigUInt64BE(BigInt(at));
    this.file.append(trailer);
    this.next = path.join(outDir, `${PARTS_FILE}.next`);
    renameSync(this.file.path, this.next);
  }

  /**
   * Puts the next store in the kept one's place: once the build is live (a failed build leaves the kept one). Never
   * throws: the build is live whatever happens to a cache; one not moved is removed (close), and the next build
   * renders every model.
   */
  commit(): void {
    try {
      renameSync(this.next!, path.join(path.dirname(this.next!), PARTS_FILE));
      this.next = null;
    } catch {}
  }

  /**
   * Closes the kept store (the next one closes once its pieces are let go) and removes a next one not committed: in
   * the staging folder it goes with it.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.kept) closeSync(this.kept.fd);
    if (this.next) rmSync(this.next, { force: true });
  }
}

/** A record's parts; `start`: where the record now is in the next store. */
function parse(record: Buffer, start: number): StoredModel {
  const restLength = record.readUInt32BE(record.length - LENGTH);
  const rest = deserialize(record.subarray(record.length - LENGTH - restLength, record.length - LENGTH)) as Rest;
  const pieces = new Float64Array(2 * rest.sizes.length);
  const texts: string[] = [];
  let at = 0;
  for (const [i, size] of rest.sizes.entries()) {
    pieces.set([start + at, size], 2 * i);
    texts.push(record.toString('utf8', at, at + size));
    at += size;
  }
  // The sections piece: `,` before each section, `}` after the last.
  const sections = {} as Record<Include, string>;
  let from = 1;
  for (const [i, include] of INCLUDES.entries()) {
    sections[include] = texts[LOCALES.length]!.slice(from, from + rest.sections[i]!);
    from += rest.sections[i]! + 1;
  }
  const detail = Object.fromEntries(LOCALES.map((l, i) => [l, `${texts[i]}}`])) as Record<Locale, string>;
  return { json: { ...rest.json, detail, sections }, pieces };
}

/** The kept store's index and open file, or null: none, unreadable, or of other code. */
function readKept(file: string): { fd: number; entries: Index['entries'] } | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    const trailer = Buffer.alloc(TRAILER);
    readFully(fd, trailer, size - TRAILER, 'the parts store');
    const at = Number(trailer.readBigUInt64BE());
    const json = Buffer.allocUnsafe(size - TRAILER - at);
    readFully(fd, json, at, 'the parts store');
    const index = JSON.parse(json.toString()) as Index;
    if (index.code === codeDigest()) return { fd, entries: index.entries };
  } catch {} // not a store this code can read: the build renders every model
  closeSync(fd);
  return null;
}
