// The bytes of a body, assembled from pre-serialized parts: a model's core object per locale, its include sections
// once per lane variant. The build writes every prebuilt body with these functions and the gateway composes the
// others (q, page sizes not prebuilt) with the same ones, so a composed answer is byte-identical to a prebuilt one.
//
// A body is `head + JSON(revision) + tail`: the tail holds everything but the revision, so the writer can tell
// whether the content changed since the previous release (the body then keeps its old revision and bytes).
import { INCLUDES, type Attribution, type Include } from '../schema/api.js';
import type { Locale, SiteFile } from '../schema/source.js';
import type { ListArtifact } from './files.js';

export const TIER = 'free';

/** A body to write: `head + JSON(revision) + tail`. */
export interface BodyParts {
  head: string;
  /**
   * Pieces for a body too large to hold as a string (a catalog of every model: 100 MB at 2,000 models), which its
   * concatenations and encodings would copy several times over; bytes for one made whole (the snapshot).
   */
  tail: string | Buffer | PiecesTail;
}

/**
 * A tail given by its pieces, made again for each pass over them: joined whole (bodyBytes), or for a large body in
 * chunks (bodyChunks), never whole in memory.
 */
export interface PiecesTail {
  /** Its UTF-8 bytes. */
  size: number;
  pieces: () => Iterable<Piece>;
}

/** Case- and accent-insensitive form used by search (NFKD, marks removed, lower case). */
export const foldText = (s: string): string => s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();

export const attributionOf = (site: SiteFile): Attribution => ({
  required: true,
  name: site.name,
  url: site.url,
  text: `Source: ${site.name} (${site.url})`,
});

/** `"k1":v1,"k2":v2` of an object: spliced into another object. */
export const innerJson = (o: object): string => JSON.stringify(o).slice(1, -1);

/** Each include section of a model as `innerJson`, ready for withSections. */
export const sectionsJson = (s: Record<Include, object>): Record<Include, string> => ({
  benchmarks: innerJson(s.benchmarks),
  capabilities: innerJson(s.capabilities),
  pricing: innerJson(s.pricing),
});

/** An object with the include sections spliced in, in canonical include order. */
export function withSections(
  objJson: string,
  sectionJson: Partial<Record<Include, string>>,
  include: readonly Include[],
): string {
  if (!include.length) return objJson;
  let out = objJson.slice(0, -1);
  for (const inc of INCLUDES) if (include.includes(inc)) out += `,${sectionJson[inc]}`;
  return `${out}}`;
}

/** The envelope of every API response (SPEC 2.1) around `dataJson`. */
export function envelopeParts(
  schemaVersion: string,
  locale: Locale,
  attributionJson: string,
  dataJson: string,
): { head: string; tail: string } {
  return {
    head: `{"schemaVersion":${JSON.stringify(schemaVersion)},"publicationRevision":`,
    tail: `,"tier":"${TIER}","locale":"${locale}","attribution":${attributionJson},"data":${dataJson}}`,
  };
}

/** Bytes that know their size and copy themselves into a body (read from a file straight into place, say). */
export interface SizedPiece {
  size: number;
  copyTo(out: Buffer, at: number): void;
}

/** A piece of a body: text, bytes, or bytes that copy themselves. */
export type Piece = string | Buffer | SizedPiece;

const sizeOf = (piece: Piece): number =>
  typeof piece === 'string' ? Buffer.byteLength(piece) : Buffer.isBuffer(piece) ? piece.length : piece.size;

/**
 * The UTF-8 bytes of a body too large for one string (a catalog, a list artifact), from its pieces: `pieces` is
 * called twice, for their sizes and then to write them, so the body is never held twice (a joined string, its bytes).
 */
export function joinedBytes(pieces: () => Iterable<Piece>): Buffer {
  let size = 0;
  for (const piece of pieces()) size += sizeOf(piece);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const piece of pieces()) {
    let n = 0; // what fits of the piece
    if (typeof piece === 'string') n = out.write(piece, at);
    else if (Buffer.isBuffer(piece)) n = piece.copy(out, at);
    else if (piece.size <= size - at) {
      piece.copyTo(out, at);
      n = piece.size;
    }
    // A piece that reached the end may have been cut short: the pieces then grew since the first pass.
    if (at + n === size && n !== sizeOf(piece)) at = Number.NaN;
    at += n;
  }
  if (at !== size) throw new Error(`a body's pieces changed between two passes (${size} bytes, then more or fewer)`);
  return out;
}

/** A tail of pieces, its size taken in a first pass over them. */
const piecesTail = (pieces: () => Iterable<Piece>): PiecesTail => {
  let size = 0;
  for (const piece of pieces()) size += sizeOf(piece);
  return { size, pieces };
};

/** `head + JSON(revision)`: what a body starts with. */
export const bodyStart = (b: BodyParts, revision: string): string => b.head + JSON.stringify(revision);

/** The bytes of a body that names `revision`: `head + JSON(revision) + tail`, whole, in memory of their own. */
export function bodyBytes(b: BodyParts, revision: string): Buffer {
  const start = bodyStart(b, revision);
  const { tail } = b;
  if (typeof tail === 'string') return Buffer.from(start + tail);
  if (Buffer.isBuffer(tail)) return Buffer.concat([Buffer.from(start), tail]);
  return joinedBytes(function* () {
    yield start;
    yield* tail.pieces();
  });
}

/**
 * The bytes of a body of pieces that names `revision`, in chunks of at most `chunkBytes` (a piece larger than that in
 * one of its own), so that it is never whole in memory. The chunks share one buffer: each is valid until the next is
 * asked for.
 */
export function* bodyChunks(
  b: BodyParts & { tail: PiecesTail },
  revision: string,
  chunkBytes: number,
): Generator<Buffer> {
  yield Buffer.from(bodyStart(b, revision));
  const buffer = Buffer.allocUnsafeSlow(chunkBytes);
  let used = 0;
  let total = 0;
  for (const piece of b.tail.pieces()) {
    const size = sizeOf(piece);
    total += size;
    if (used > 0 && used + size > chunkBytes) {
      yield buffer.subarray(0, used);
      used = 0;
    }
    if (size > chunkBytes) yield joinedBytes(() => [piece]);
    else if (typeof piece === 'string') used += buffer.write(piece, used);
    else if (Buffer.isBuffer(piece)) used += piece.copy(buffer, used);
    else {
      piece.copyTo(buffer, used);
      used += size;
    }
  }
  if (used > 0) yield buffer.subarray(0, used);
  if (total !== b.tail.size) {
    throw new Error(`a body's pieces changed between two passes (${b.tail.size} bytes, then ${total})`);
  }
}

/** withSections as pieces (nothing joined): for a body made of many of them (joinedBytes). */
export function* sectionPieces(
  objJson: string,
  sectionJson: Partial<Record<Include, string>>,
  include: readonly Include[],
): Generator<string> {
  if (!include.length) {
    yield objJson;
    return;
  }
  yield objJson.slice(0, -1);
  for (const inc of INCLUDES)
    if (include.includes(inc)) {
      yield ',';
      yield sectionJson[inc]!;
    }
  yield '}';
}

/** envelopeParts for data given as pieces of its JSON (made again for each pass over them): a tail of pieces. */
export function envelopeBytes(
  schemaVersion: string,
  locale: Locale,
  attributionJson: string,
  dataPieces: () => Iterable<Piece>,
): BodyParts {
  const empty = envelopeParts(schemaVersion, locale, attributionJson, '');
  const open = empty.tail.slice(0, -1);
  return {
    head: empty.head,
    tail: piecesTail(function* (): Generator<Piece> {
      yield open;
      yield* dataPieces();
      yield '}';
    }),
  };
}

export function listDataJson(itemJsons: readonly string[], page: number, pageSize: number, total: number): string {
  const pagination = { page, page_size: pageSize, total, total_pages: Math.ceil(total / pageSize) };
  return `{"models":[${itemJsons.join(',')}],"pagination":${JSON.stringify(pagination)}}`;
}

/** A model as a list artifact holds it (ArtifactModel), from its JSON parts: JSON.stringify of the object they make. */
export function* artifactModelPieces(
  item: Record<Locale, string>,
  sections: Record<Include, string>,
  searchJson: string,
  facetsJson: string,
): Generator<string> {
  let sep = '{"item":{';
  for (const [locale, json] of Object.entries(item)) {
    yield `${sep}${JSON.stringify(locale)}:`;
    yield json;
    sep = ',';
  }
  sep = '},"sections":{';
  for (const inc of INCLUDES) {
    yield `${sep}${JSON.stringify(inc)}:{`;
    yield sections[inc];
    sep = '},';
  }
  yield `}},"search":${searchJson},"facets":${facetsJson}}`;
}

/**
 * A list artifact's parts: its kind first, then its revision, then the rest in schema order; `models` gives each
 * model's key and pieces (artifactModelPieces), in the order of an object's keys, and is called once per pass over
 * them (PiecesTail).
 */
export function artifactParts(
  a: Omit<ListArtifact, 'kind' | 'publicationRevision' | 'models'>,
  models: () => Iterable<readonly [string, Iterable<string>]>,
): BodyParts {
  const rest: Omit<ListArtifact, 'kind' | 'publicationRevision' | 'models'> = {
    schemaVersion: a.schemaVersion,
    attribution: a.attribution,
    prebuiltPageSizes: a.prebuiltPageSizes,
    orders: a.orders,
  };
  const head = '{"kind":"modelpub.list-artifact","publicationRevision":';
  return {
    head,
    tail: piecesTail(function* () {
      yield `,${innerJson(rest)},"models":{`;
      let sep = '';
      for (const [slug, pieces] of models()) {
        yield `${sep}${JSON.stringify(slug)}:`;
        yield* pieces;
        sep = ',';
      }
      yield '}}';
    }),
  };
}
