// A publication's JSON files, checked against their schemas as they are read (release.ts checks their bytes).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { Attribution } from '../schema/api.js';
import { ListArtifact, Manifest, ManifestEntry, BodyRepresentations } from './files.js';
import { Sha256Hex } from '../schema/primitives.js';
import { packedRepresentations } from './layout.js';
import { ManifestTable, RepresentationTable } from './tables.js';

/** Artifacts of releases written before artifacts carried the attribution lack it: the reader takes the release's. */
const ArtifactAsRead = ListArtifact.extend({ attribution: Attribution.optional() });
export type ArtifactAsRead = z.infer<typeof ArtifactAsRead>;
/**
 * The artifact as written, once checked: zod's output would list each object's keys in schema order, and a composed
 * page must keep the key order of the build's bytes to equal a prebuilt one (the schema has no defaults or transforms).
 */
export const parseArtifact = (bytes: Buffer, where: string): ArtifactAsRead =>
  parseJsonFile(ArtifactAsRead, bytes, where, { keepInput: true });

/** A JSON file checked against its schema, with an error that names the file, the field and the reason. */
export function parseJsonFile<T>(
  schema: z.ZodType<T>,
  bytes: Buffer | string,
  where: string,
  { keepInput = false } = {},
): T {
  let doc: unknown;
  try {
    doc = JSON.parse(typeof bytes === 'string' ? bytes : bytes.toString('utf8'));
  } catch (e) {
    throw new Error(`${where}: not JSON (${(e as Error).message})`);
  }
  const data = checked(schema, doc, where);
  return keepInput ? (doc as T) : data;
}

function checked<T>(schema: z.ZodType<T>, doc: unknown, where: string, at: PropertyKey[] = []): T {
  const r = schema.safeParse(doc);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`${where}: ${[...at, ...i.path].map(String).join('.') || '(top)'}: ${i.message}`);
  }
  return r.data;
}

/** Rows checked between two turns of the event loop: a few milliseconds of work. */
const SLICE = 2048;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const EntrySlice = ManifestEntry.array();
const RepresentationSlice = z.record(Sha256Hex, BodyRepresentations);

/**
 * manifest.json checked against its schema as parseJsonFile does, with the same errors, but its entries a slice at a
 * time with a turn of the event loop between two: a gateway loading the next publication (75,000 entries) goes on
 * answering requests meanwhile, where one check of the whole took it away for a second or more.
 */
export async function parseManifest(bytes: Buffer, where: string): Promise<Manifest> {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new Error(`${where}: not JSON (${(e as Error).message})`);
  }
  await nextTurn();
  const d = doc as { files?: unknown; representations?: unknown };
  const isRecord = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  // Anything but the usual shape is checked whole: its error is then the one a single check gives.
  if (!isRecord(doc) || !Array.isArray(d.files) || (d.representations !== undefined && !isRecord(d.representations)))
    return checked(Manifest, doc, where);
  const { files, representations } = d as { files: unknown[]; representations?: Record<string, unknown> };
  const head = checked(
    Manifest,
    { ...d, files: [], ...(representations === undefined ? {} : { representations: {} }) },
    where,
  );
  const out: ManifestEntry[] = [];
  for (let i = 0; i < files.length; i += SLICE) {
    const part = files.slice(i, i + SLICE);
    const rows = EntrySlice.safeParse(part);
    if (!rows.success) {
      const issue = rows.error.issues[0]!;
      const [n, ...rest] = issue.path;
      throw new Error(`${where}: ${['files', Number(n) + i, ...rest].map(String).join('.')}: ${issue.message}`);
    }
    for (const row of rows.data) out.push(row);
    await nextTurn();
  }
  head.files = out;
  if (representations !== undefined) {
    const reps: Record<string, BodyRepresentations> = {};
    const keys = Object.keys(representations);
    for (let i = 0; i < keys.length; i += SLICE) {
      const part = Object.fromEntries(keys.slice(i, i + SLICE).map((k) => [k, representations[k]]));
      Object.assign(reps, checked(RepresentationSlice, part, where, ['representations']));
      await nextTurn();
    }
    head.representations = reps;
    try {
      for (const _ of packedRepresentations(reps, head.packs));
    } catch (e) {
      throw new Error(`${where}: ${(e as Error).message}`);
    }
  }
  return head;
}

/** A manifest as a build keeps the release it continues from: its entries and representations in compact tables. */
export interface IndexedManifest {
  head: Omit<Manifest, 'files' | 'representations' | 'packs'>;
  /** With their pack list (`packs`, or null for a manifest without). */
  files: ManifestTable;
  representations: RepresentationTable | null;
  /** The sha256 of the bytes read. */
  sha256: string;
}

/** The manifest is not in the shape a build writes (or not JSON): read whole, for parseManifest's own errors. */
class NotPlain extends Error {}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The index of the quote that ends a JSON string, looking from `from`; -1 when it is not in `b` yet. */
function stringEnd(b: Buffer, from: number): number {
  for (;;) {
    const j = b.indexOf(QUOTE, from);
    if (j < 0) return -1;
    let k = j - 1;
    while (b[k] === BACKSLASH) k--;
    if ((j - 1 - k) % 2 === 0) return j;
    from = j + 1;
  }
}

/** Where the scanner is in the top-level object: before it, at a key, a value, after one, inside `files`, inside
 * `representations`, inside the value of another key, past its end. */
const At = {
  Start: 0,
  FirstKey: 1,
  Key: 2,
  Colon: 3,
  Value: 4,
  AfterValue: 5,
  Files: 6,
  Representations: 7,
  Other: 8,
  Done: 9,
} as const;
type At = (typeof At)[keyof typeof At];

/**
 * Reads manifest.json a chunk at a time: the top-level object's own fields as they come, `files` and
 * `representations` a slice of SLICE rows at a time (each parsed and checked as parseManifest does, then put in the
 * tables), so that neither the whole text nor its objects are ever held. It tracks only strings and nesting; anything
 * it does not expect throws NotPlain, and the caller parses the whole file instead (which gives the error).
 */
class ManifestScanner {
  private buf: Buffer = Buffer.alloc(0);
  /** The offset in the file of buf[0], of the next byte to scan, and of the first byte still needed (or -1). */
  private base = 0;
  private pos = 0;
  private tokenStart = -1;
  private at: At = At.Start;
  private inString = false;
  private depth = 0;
  /** Rows in the slice being gathered, and rows before it in the current array or object. */
  private count = 0;
  private before = 0;
  private key = '';
  private readonly head: Record<string, unknown> = {};
  readonly files = new ManifestTable();
  representations: RepresentationTable | null = null;
  private sawFiles = false;
  private filesError: string | null = null;
  private representationsError: string | null = null;

  constructor(private readonly where: string) {}

  push(chunk: Buffer): void {
    const keep = this.tokenStart >= 0 ? this.tokenStart : this.pos;
    const from = keep - this.base;
    this.buf = from >= this.buf.length ? chunk : Buffer.concat([this.buf.subarray(from), chunk]);
    this.base = keep;
    this.scan();
  }

  /** The manifest, once every chunk is pushed; its head is checked first, as parseManifest does. */
  end(): Omit<IndexedManifest, 'sha256'> {
    if (this.at !== At.Done || !this.sawFiles) throw new NotPlain();
    const {
      files: _,
      representations: __,
      packs,
      ...head
    } = checked(
      Manifest,
      { ...this.head, files: [], ...(this.representations ? { representations: {} } : {}) },
      this.where,
    );
    if (this.filesError) throw new Error(this.filesError);
    if (this.representationsError) throw new Error(this.representationsError);
    if (this.representations) {
      this.representations.packs = packs ?? null;
      const misplaced = this.representations.misplaced();
      if (misplaced) throw new Error(`${this.where}: ${misplaced}`);
    }
    return { head, files: this.files, representations: this.representations };
  }

  private text(from: number, to: number): string {
    return this.buf.toString('utf8', from - this.base, to - this.base);
  }

  private parse(text: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      throw new NotPlain();
    }
  }

  /** The rows of the slice [tokenStart, to), `n` of them; to is the offset of the comma or bracket that ends it. */
  private slice(to: number, n: number): void {
    const text = this.text(this.tokenStart, to);
    if (this.at === At.Files) {
      const rows = this.parse(`[${text}]`);
      if (!Array.isArray(rows) || rows.length !== n) throw new NotPlain();
      if (this.filesError === null) {
        const r = EntrySlice.safeParse(rows);
        if (r.success) for (const row of rows as ManifestEntry[]) this.files.add(row);
        else {
          const issue = r.error.issues[0]!;
          const [i, ...rest] = issue.path;
          const at = ['files', Number(i) + this.before, ...rest].map(String).join('.');
          this.filesError = `${this.where}: ${at}: ${issue.message}`;
        }
      }
    } else {
      const part = this.parse(`{${text}}`) as Record<string, BodyRepresentations>;
      const keys = Object.keys(part);
      const table = this.representations!;
      // Two equal keys: JSON.parse of the whole keeps the last, which the whole-file path does.
      if (keys.length !== n) throw new NotPlain();
      if (this.representationsError === null) {
        try {
          checked(RepresentationSlice, part, this.where, ['representations']);
        } catch (e) {
          this.representationsError = (e as Error).message;
        }
        const size = table.size;
        if (this.representationsError === null) for (const k of keys) table.add(k, part[k]!);
        if (table.size !== size + keys.length) throw new NotPlain();
      }
    }
    this.before += n;
  }

  /** stringEnd, or -1 with the scan left inside the string when it goes on past the chunk (`end`). */
  private stringEnd(b: Buffer, from: number, end: number): number {
    const j = stringEnd(b, from);
    if (j < 0) {
      this.inString = true;
      this.pos = this.base + end;
    }
    return j;
  }

  private scan(): void {
    const b = this.buf;
    const end = b.length;
    let i = this.pos - this.base;
    if (this.inString) {
      const j = stringEnd(b, i);
      if (j < 0) {
        this.pos = this.base + end;
        return;
      }
      this.inString = false;
      i = j + 1;
      if (this.at === At.Key || this.at === At.FirstKey) this.endKey(j);
    }
    while (i < end) {
      const c = b[i]!;
      switch (this.at) {
        case At.Start:
          if (isSpace(c)) break;
          if (c !== 0x7b) throw new NotPlain();
          this.at = At.FirstKey;
          break;
        case At.FirstKey:
        case At.Key:
          if (isSpace(c)) break;
          if (c === 0x7d && this.at === At.FirstKey) {
            this.at = At.Done;
            break;
          }
          if (c !== QUOTE) throw new NotPlain();
          this.tokenStart = this.base + i;
          {
            const j = this.stringEnd(b, i + 1, end);
            if (j < 0) return;
            i = j;
            this.endKey(j);
          }
          break;
        case At.Colon:
          if (isSpace(c)) break;
          if (c !== 0x3a) throw new NotPlain();
          this.at = At.Value;
          break;
        case At.Value:
          if (isSpace(c)) break;
          this.depth = 0;
          this.count = 0;
          this.before = 0;
          if (this.key === 'files') {
            if (c !== 0x5b) throw new NotPlain();
            this.sawFiles = true;
            this.at = At.Files;
            this.tokenStart = this.base + i + 1;
          } else if (this.key === 'representations') {
            if (c !== 0x7b) throw new NotPlain();
            this.representations = new RepresentationTable();
            this.at = At.Representations;
            this.tokenStart = this.base + i + 1;
          } else {
            this.at = At.Other;
            this.tokenStart = this.base + i;
            continue; // the value's first byte is scanned as part of it
          }
          break;
        case At.AfterValue:
          if (isSpace(c)) break;
          if (c === 0x2c) this.at = At.Key;
          else if (c === 0x7d) this.at = At.Done;
          else throw new NotPlain();
          break;
        case At.Done:
          if (!isSpace(c)) throw new NotPlain();
          break;
        default: {
          // Inside a value: only strings and nesting matter until the comma or bracket that ends a row or the value.
          for (; i < end; i++) {
            const d = b[i]!;
            if (d === QUOTE) {
              const j = this.stringEnd(b, i + 1, end);
              if (j < 0) return;
              i = j;
            } else if (d === 0x7b || d === 0x5b) this.depth++;
            else if (d === 0x7d || d === 0x5d) {
              if (this.depth === 0) break;
              this.depth--;
            } else if (d === 0x2c && this.depth === 0) {
              if (this.at === At.Other) break;
              if (++this.count === SLICE) {
                this.slice(this.base + i, this.count);
                this.count = 0;
                this.tokenStart = this.base + i + 1;
              }
            }
          }
          if (i === end) break;
          i += this.valueEnds(i, b[i]!);
          continue;
        }
      }
      i++;
    }
    this.pos = this.base + end;
  }

  private endKey(j: number): void {
    const key = this.parse(this.text(this.tokenStart, this.base + j + 1)) as string;
    // A key given twice (JSON.parse keeps the last) or one an object literal treats specially: read whole.
    if (key in this.head || key === '__proto__' || (key === 'files' && this.sawFiles)) throw new NotPlain();
    if (key === 'representations' && this.representations) throw new NotPlain();
    this.key = key;
    this.tokenStart = -1;
    this.at = At.Colon;
  }

  /**
   * The value of the current key ends at `i`: at a `,` or `}` of the top level for Other (scanned again there: 0 bytes
   * consumed), at its own `]` or `}` else (1).
   */
  private valueEnds(i: number, c: number): number {
    const to = this.base + i;
    if (this.at === At.Other) {
      const value = this.parse(this.text(this.tokenStart, to));
      Object.defineProperty(this.head, this.key, { value, enumerable: true, writable: true, configurable: true });
      this.tokenStart = -1;
      this.at = At.AfterValue;
      return 0;
    }
    if ((this.at === At.Files) !== (c === 0x5d)) throw new NotPlain();
    const last = this.text(this.tokenStart, to);
    if (/\S/.test(last)) this.slice(to, this.count + 1);
    else if (this.count > 0 || this.before > 0) throw new NotPlain(); // a comma with no row after it
    this.tokenStart = -1;
    this.at = At.AfterValue;
    return 1;
  }
}

/**
 * manifest.json read a chunk at a time into compact tables, checked as parseManifest checks it and with its errors.
 * `whole` reads it again at once: a manifest the scanner does not take is parsed whole, so that its error (or, for
 * an unusual but valid one, its entries) are parseManifest's.
 */
export async function parseManifestIndex(
  chunks: AsyncIterable<Buffer>,
  where: string,
  whole: () => Promise<Buffer>,
): Promise<IndexedManifest> {
  const scanner = new ManifestScanner(where);
  const hash = createHash('sha256');
  try {
    for await (const chunk of chunks) {
      hash.update(chunk);
      scanner.push(chunk);
      await nextTurn();
    }
    return fitted({ ...scanner.end(), sha256: hash.digest('hex') });
  } catch (e) {
    if (!(e instanceof NotPlain)) throw e;
  }
  const bytes = await whole();
  const m = await parseManifest(bytes, where);
  const files = new ManifestTable();
  for (const f of m.files) files.add(f);
  const { files: _, representations, packs, ...head } = m;
  return fitted({
    head,
    files,
    representations: representations ? RepresentationTable.of(representations, packs) : null,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  });
}

/** A manifest read whole gets no more rows: its tables let go of the room they grew for (ManifestTable.fit). */
function fitted(m: IndexedManifest): IndexedManifest {
  m.files.fit();
  m.representations?.fit();
  return m;
}
