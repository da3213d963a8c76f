// Stage 1: read the source tree. Hand-edited files are YAML (kept as documents so that errors can name a line);
// machine-appended measurements are JSON Lines (one record per line, so the line number is the record). A JSON Lines
// file is read a chunk of lines at a time and each record checked against its schema as its line is parsed
// (records.ts): the largest files (500,000 speed runs) are never held whole, as bytes, text or raw records.
import { constants, isUtf8 } from 'node:buffer';
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import fg from 'fast-glob';
import { LineCounter, isPair, isScalar, parseDocument, visit, type Document } from 'yaml';
import { UsageError, quoted, type SourceIssue } from '../errors.js';
import type { z } from 'zod';
import { type RECORD_SCHEMAS, RecordSet, checkRecord, type RecordKind } from './records.js';
import { SpeedRuns } from './speed-runs.js';

/** The speed runs, by far the most numerous records, are kept in columns (speed-runs.ts). */
export type Records = { speed: SpeedRuns } & {
  [K in Exclude<RecordKind, 'speed'>]: RecordSet<z.infer<(typeof RECORD_SCHEMAS)[K]>>;
};

export interface YamlSource {
  file: string; // relative to the data folder, with forward slashes
  doc: Document.Parsed;
  lines: LineCounter;
}
export interface LoadedTree {
  dataDir: string;
  site: YamlSource | null;
  sources: YamlSource | null;
  metrics: YamlSource | null;
  providers: YamlSource | null;
  models: YamlSource[];
  overrides: YamlSource[];
  /**
   * The JSON Lines records that passed their schema, by kind (priceHistory: price-history/*.jsonl, offers' dated
   * prices). Those that did not are in `recordIssues`, reported after the YAML files' schema problems.
   */
  records: Records;
  recordIssues: Record<RecordKind, SourceIssue[]>;
  /** sha256 over every input file's name and bytes: the default revision id derives from it. */
  digest: string;
  issues: SourceIssue[];
}

export const MEASUREMENT_KINDS = ['speed', 'benchmarks', 'prices'] as const;

export async function loadTree(dataDir: string): Promise<LoadedTree> {
  const st = await stat(dataDir).catch(() => null);
  if (!st?.isDirectory()) throw new UsageError(`data folder ${dataDir} does not exist or is not a folder`);
  // Every file, not only the expected ones: a file in the wrong place (data/overrides.yaml) would otherwise be
  // skipped without a word, and the build would publish without it.
  const recordFiles: string[] = [];
  const strings = new Map<string, string>();
  const tree: LoadedTree = {
    dataDir,
    site: null,
    sources: null,
    metrics: null,
    providers: null,
    models: [],
    overrides: [],
    records: {
      speed: new SpeedRuns(recordFiles),
      benchmarks: new RecordSet(recordFiles, strings),
      prices: new RecordSet(recordFiles, strings),
      offers: new RecordSet(recordFiles, strings),
      priceHistory: new RecordSet(recordFiles, strings),
    },
    recordIssues: { speed: [], benchmarks: [], prices: [], offers: [], priceHistory: [] },
    digest: '',
    issues: [],
  };
  const refused = await checkEntries(dataDir, tree.issues);
  const ignore = refused.flatMap((l) => [fg.escapePath(l), `${fg.escapePath(l)}/**`]);
  const files = (await fg(['**/*'], { cwd: dataDir, onlyFiles: true, dot: false, ignore })).sort();
  const hash = createHash('sha256');
  // Each file's size, and a YAML file's bytes, are asked for a few files ahead of its turn: one at a time, the 2,000
  // model files of a large catalog waited about a second on the disk.
  const ask = (file: string) => {
    const abs = path.join(dataDir, file);
    const yaml = /\.ya?ml$/.test(file);
    const p = stat(abs).then(async ({ size }) => ({
      size,
      bytes: yaml && size <= READ_AHEAD ? await readFile(abs) : null,
    }));
    p.catch(() => {}); // handled: the error is thrown at the file's turn
    return p;
  };
  const pending = files.slice(0, FILES_AHEAD).map(ask);
  for (const [i, file] of files.entries()) {
    const early = pending.shift()!;
    const next = files[i + FILES_AHEAD];
    if (next !== undefined) pending.push(ask(next));
    const [top, kind] = file.split('/');
    const atTop = kind === undefined;
    // Documentation, at the top or in a data folder, is not data, nor part of the digest: editing a README is no new
    // revision to build and publish (a .md in a folder that is not the data's is still an unexpected file).
    if (file.endsWith('.md') && (atTop || (FOLDERS as readonly string[]).includes(top!))) continue;
    const yaml = file.endsWith('.yaml') || file.endsWith('.yml');
    const offers = top === 'offers' && kind !== undefined && !file.slice('offers/'.length).includes('/');
    const history = top === 'price-history' && kind !== undefined && !file.slice('price-history/'.length).includes('/');
    const jsonl =
      file.endsWith('.jsonl') &&
      (offers || history || (top === 'measurements' && (MEASUREMENT_KINDS as readonly string[]).includes(kind ?? '')));
    // A file that is not data is named from its first bytes only: it may be anything, of any size.
    if (atTop ? !TOP_FILES.includes(file) : !(FOLDERS as readonly string[]).includes(top!)) {
      const where = atTop
        ? `the top of the data folder holds only ${TOP_FILES.join(', ')}, documentation (.md) and the folders ${FOLDER_LIST}`
        : `${top}/ is not a folder of the data (${FOLDER_LIST})`;
      tree.issues.push({
        file,
        message: `unexpected file: ${where}${likelyHome(file, await readHead(path.join(dataDir, file)))}`,
      });
      continue;
    }
    if (!yaml && !jsonl) {
      tree.issues.push({
        file,
        message:
          'unexpected file: models and overrides are .yaml, offers are offers/*.jsonl, dated prices ' +
          `price-history/*.jsonl, measurements are measurements/{${MEASUREMENT_KINDS.join(',')}}/*.jsonl` +
          likelyHome(file, await readHead(path.join(dataDir, file))),
      });
      continue;
    }
    // Text longer than V8's longest string cannot be decoded: without this, the run ended naming no file.
    const { size, bytes: read } = await early;
    if (size > constants.MAX_STRING_LENGTH) {
      const mb = (n: number) => (n / 2 ** 20).toFixed(0);
      tree.issues.push({
        file,
        message:
          `too large: ${mb(size)} MB, more than the ${mb(constants.MAX_STRING_LENGTH)} MB a data file can hold; split ` +
          'it into several files',
      });
      continue;
    }
    hash.update(file).update('\0');
    if (jsonl) {
      const into: RecordKind = offers
        ? 'offers'
        : history
          ? 'priceHistory'
          : (kind as (typeof MEASUREMENT_KINDS)[number]);
      await loadJsonl(tree, file, size, into, recordFiles, hash);
      hash.update('\0');
      continue;
    }
    const bytes = read ?? (await readFile(path.join(dataDir, file)));
    hash.update(bytes).update('\0');
    const text = decodeUtf8(file, bytes, tree.issues);
    if (text === null) continue;
    const y = parseYaml(file, text, tree.issues);
    if (!y) continue;
    if (top === 'site.yaml') tree.site = y;
    else if (top === 'sources.yaml') tree.sources = y;
    else if (top === 'metrics.yaml') tree.metrics = y;
    else if (top === 'providers.yaml') tree.providers = y;
    else if (top === 'models') tree.models.push(y);
    else if (top === 'overrides') tree.overrides.push(y);
    else tree.issues.push({ file, message: `${top} are JSON Lines (.jsonl), not YAML` });
  }
  for (const [name, y] of [
    ['site.yaml', tree.site],
    ['sources.yaml', tree.sources],
    ['metrics.yaml', tree.metrics],
  ] as const) {
    if (!y && !tree.issues.some((i) => i.file === name))
      tree.issues.push({ file: name, message: 'missing: every data folder has one' });
  }
  tree.digest = hash.digest('hex');
  return tree;
}

/**
 * What the listing of files must not read, each one problem here, returned to be left out:
 * - a symbolic link that leads out of the data folder (to /etc/shadow, whose lines the error list would quote);
 * - a link to a folder that holds it (data/models/loop -> ..), which would be walked ~40 levels deep, every file of
 *   the data read again at each (tens of thousands of problems, none naming the link);
 * - anything that is neither a file nor a folder: a named pipe would hang the read, a device would never end it.
 * A link to nothing was skipped without a word; it is a problem too. Links within the data folder are followed.
 */
async function checkEntries(dataDir: string, issues: SourceIssue[]): Promise<string[]> {
  const refused: string[] = [];
  const root = await realpath(dataDir);
  const entries = await fg(['**/*'], {
    cwd: dataDir,
    onlyFiles: false,
    followSymbolicLinks: false,
    dot: false,
    objectMode: true,
  });
  const inside = (p: string) => {
    const rel = path.relative(root, p);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  };
  for (const e of entries.sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const abs = path.join(dataDir, e.path);
    if (!e.dirent.isSymbolicLink()) {
      if (!e.dirent.isFile() && !e.dirent.isDirectory()) {
        issues.push({
          file: e.path,
          message: `${specialKind(e.dirent)}, not a file: refused (data files are regular files)`,
        });
        refused.push(e.path);
      }
      continue;
    }
    const target = await realpath(abs).catch(() => null);
    if (target === null) {
      issues.push({ file: e.path, message: 'a symbolic link to nothing (its target is missing): fix it or remove it' });
      continue;
    }
    if (!inside(target)) {
      issues.push({
        file: e.path,
        message: 'a symbolic link that leads out of the data folder: refused, never read (copy the file in instead)',
      });
      refused.push(e.path);
      continue;
    }
    const st = await stat(target);
    if (!st.isFile() && !st.isDirectory()) {
      issues.push({ file: e.path, message: `a symbolic link to ${specialKind(st)}, not a file: refused` });
      refused.push(e.path);
      continue;
    }
    const parent = await realpath(path.dirname(abs));
    const rel = path.relative(target, parent); // '' or 'a/b' when the target is the parent or holds it
    if (!rel.startsWith('..') && !path.isAbsolute(rel)) {
      issues.push({
        file: e.path,
        message: 'a symbolic link to a folder that holds it (a loop, never read): remove it',
      });
      refused.push(e.path);
    }
  }
  return refused;
}

/** What a directory entry that is neither a file nor a folder is, for a problem about it. */
function specialKind(e: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean }): string {
  return e.isFIFO()
    ? 'a named pipe (FIFO)'
    : e.isSocket()
      ? 'a socket'
      : e.isCharacterDevice()
        ? 'a character device'
        : 'a block device';
}

const TOP_FILES = ['site.yaml', 'sources.yaml', 'metrics.yaml', 'providers.yaml'];
const FOLDERS = ['models', 'overrides', 'measurements', 'offers', 'price-history'] as const;
const FOLDER_LIST = FOLDERS.map((f) => `${f}/`).join(', ');

/** The first 4 KiB of a file: enough for likelyHome(). */
async function readHead(file: string): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** "; it probably belongs in <place>" for a misplaced file, when its name or first lines make that plain; else ''. */
function likelyHome(file: string, head4k: Buffer): string {
  const name = path.posix.basename(file).toLowerCase();
  const head = head4k.toString('utf8');
  let home: string | undefined;
  if (/\.ya?ml$/.test(name)) {
    const stem = name.replace(/\.ya?ml$/, '').replace(/s$/, '');
    const top = TOP_FILES.find((t) => t.replace(/s?\.yaml$/, '') === stem);
    if (top) return top === file ? '' : `; did you mean ${top}?`;
    home =
      name.includes('override') || /^overrides\s*:/m.test(head)
        ? 'overrides/'
        : /^id\s*:/m.test(head)
          ? 'models/'
          : undefined;
  } else if (name.endsWith('.jsonl') || name.endsWith('.json')) {
    home = head.includes('"effective_from"')
      ? 'price-history/'
      : head.includes('"provider_model_id"')
        ? 'offers/'
        : name.includes('speed') || head.includes('"tokens_per_second"')
          ? 'measurements/speed/'
          : name.includes('bench') || head.includes('"metric"')
            ? 'measurements/benchmarks/'
            : name.includes('price') || head.includes('"input_per_million"')
              ? 'measurements/prices/'
              : undefined;
    if (home && name.endsWith('.json')) home += ' (as .jsonl, one record per line)';
  }
  return home && !file.startsWith(home) ? `; it probably belongs in ${home}` : '';
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The file's text, or null and an issue at its first byte that is not UTF-8 (readFile's 'utf8' would put U+FFFD in
 * its place, and the build would publish that). The BOM is kept, as readFile kept it.
 */
function decodeUtf8(file: string, bytes: Buffer, issues: SourceIssue[]): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    // Located with the lenient decoder: the text before its first U+FFFD that does not stand for the bytes EF BF BD
    // (a U+FFFD written in the file) is exact, so it gives the line, column and byte offset of the first bad byte.
    const text = lenientUtf8.decode(bytes);
    let [i, offset, from] = [text.indexOf('\uFFFD'), 0, 0];
    for (; i !== -1; i = text.indexOf('\uFFFD', i + 1)) {
      offset += Buffer.byteLength(text.slice(from, i));
      from = i;
      if (bytes[offset] !== 0xef || bytes[offset + 1] !== 0xbf || bytes[offset + 2] !== 0xbd) break;
    }
    const lineStart = text.lastIndexOf('\n', i - 1) + 1;
    const line = text.slice(0, lineStart).split('\n').length;
    const column = [...text.slice(lineStart, i)].length + 1;
    issues.push({
      file,
      line,
      message:
        `not valid UTF-8: byte 0x${bytes[offset]?.toString(16)} at column ${column} (byte offset ${offset}) starts no ` +
        'valid character; save the file as UTF-8',
    });
    return null;
  }
}

function parseYaml(file: string, text: string, issues: SourceIssue[]): YamlSource | null {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) {
    for (const e of doc.errors)
      issues.push({ file, line: lines.linePos(e.pos[0]).line, message: `YAML: ${e.message.split('\n')[0]}` });
    return null;
  }
  return { file, doc, lines };
}

/** Deeper than any record of the data needs (they are 3 levels deep): a 5,000-deep record overflowed the stack. */
export const MAX_JSON_DEPTH = 64;

const CHUNK = 1 << 20;
/** How many files are asked for ahead of their turn, and the largest YAML file read then. */
const FILES_AHEAD = 16;
const READ_AHEAD = CHUNK;

/**
 * A JSON Lines file into `tree.records[kind]`, its bytes into `hash`. It is read in chunks cut after their last line
 * feed (a byte no multi-byte character contains), so each chunk's lines decode on their own. A file that turns out
 * not to be UTF-8 gives only that problem, as if read whole: what its first lines gave is taken back.
 */
async function loadJsonl(
  tree: LoadedTree,
  file: string,
  size: number,
  kind: RecordKind,
  files: string[],
  hash: Hash,
): Promise<void> {
  const index = files.push(file) - 1;
  const set = tree.records[kind];
  const schemaIssues = tree.recordIssues[kind];
  const [records, issues, problems] = [set.length, tree.issues.length, schemaIssues.length];
  let line = 0;
  const lines = (text: string) => {
    for (let start = 0; start < text.length; ) {
      let end = text.indexOf('\n', start);
      if (end === -1) end = text.length;
      line++;
      const raw = text.slice(start, end).trim();
      start = end + 1;
      if (!raw) continue;
      const value = parseRecord(file, line, raw, tree.issues);
      if (value !== undefined) checkRecord(kind, value, set, { index, file, line }, schemaIssues);
    }
  };
  let utf8 = true;
  let rest: Buffer = Buffer.alloc(0);
  // A file of one chunk or less is read at once: a stream's set-up costs more than such a file's lines.
  const abs = path.join(tree.dataDir, file);
  const chunks = size <= CHUNK ? [await readFile(abs)] : createReadStream(abs, { highWaterMark: CHUNK });
  for await (const chunk of chunks as AsyncIterable<Buffer>) {
    hash.update(chunk);
    if (!utf8) continue;
    const buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
    const cut = buf.lastIndexOf(0x0a) + 1;
    utf8 = isUtf8(buf.subarray(0, cut));
    if (utf8 && cut) lines(buf.toString('utf8', 0, cut));
    rest = buf.subarray(cut);
  }
  if (utf8 && rest.length) {
    utf8 = isUtf8(rest);
    if (utf8) lines(rest.toString('utf8'));
  }
  if (utf8) return;
  set.truncate(records);
  tree.issues.length = issues;
  schemaIssues.length = problems;
  decodeUtf8(file, await readFile(path.join(tree.dataDir, file)), tree.issues);
}

/** One line's record as JSON.parse gives it, or undefined and its problem in `issues`. */
function parseRecord(file: string, line: number, raw: string, issues: SourceIssue[]): unknown {
  let value: unknown;
  try {
    value = JSON.parse(raw); // which does not recurse: a record nested any depth parses, and is refused below
  } catch (e) {
    issues.push({ file, line, message: `not valid JSON: ${(e as Error).message}` });
    return undefined;
  }
  const keys = keyCount(value, MAX_JSON_DEPTH);
  if (keys < 0) {
    issues.push({
      file,
      line,
      message: `nested more than ${MAX_JSON_DEPTH} levels deep (arrays and objects within each other): a record is a few levels deep`,
    });
    return undefined;
  }
  const twice = keysWrittenTwice(raw, keys);
  for (const field of twice)
    issues.push({
      file,
      line,
      field: field.length <= 80 ? field : quoted(field),
      message: 'written twice in this record (JSON would keep the last one without a word): keep one',
    });
  return twice.length === 0 ? value : undefined;
}

/**
 * JSON.parse keeps the last of a key written twice (`"value":61.7,"value":6170`) silently. Every key in the text is
 * followed by `"` and a colon, so a record with as many parsed keys (`keys`) as such marks has no key twice; only
 * when there are more (a key twice, or `\":` inside a string) is the line read again, by yaml, to name the keys.
 */
function keysWrittenTwice(raw: string, keys: number): string[] {
  let marks = 0;
  for (const re = /"\s*:/g; re.exec(raw) !== null; ) marks++;
  if (marks <= keys) return [];
  const twice: string[] = [];
  visit(parseDocument(raw, { uniqueKeys: false }), {
    Map(_, map, ancestors) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        const name = isScalar(key) ? key.value : key;
        if (seen.has(name))
          twice.push(
            [...ancestors.filter(isPair).map((p) => String(isScalar(p.key) ? p.key.value : p.key)), String(name)].join(
              '.',
            ),
          );
        seen.add(name);
      }
    },
  });
  return twice;
}

/**
 * The keys of a parsed record's objects, or -1 where arrays and objects nest more than `levels` deep; bounded by
 * `levels`, the walk cannot overflow the stack whatever the record.
 */
function keyCount(v: unknown, levels: number): number {
  if (v === null || typeof v !== 'object') return 0;
  if (levels === 0) return -1;
  let n = 0;
  for (const x of Array.isArray(v) ? v : Object.values(v)) {
    const k = keyCount(x, levels - 1);
    if (k < 0) return -1;
    n += k;
  }
  return Array.isArray(v) ? n : n + Object.keys(v).length;
}

/** The 1-based line of the node at a path inside a YAML document, or of its nearest existing parent. */
export function lineOf(y: YamlSource, at: readonly PropertyKey[]): number | undefined {
  for (let n = at.length; n >= 0; n--) {
    const node = y.doc.getIn(at.slice(0, n) as unknown[], true) as { range?: [number, number, number] } | undefined;
    if (node && typeof node === 'object' && node.range) return y.lines.linePos(node.range[0]).line;
  }
  return undefined;
}
