// A body made to bytes as the writer uses them: named with the revision that keeps its previous bytes when its
// content did not change, and whole, or for a large body made again in chunks for each use, never whole.
import { createHash } from 'node:crypto';
import { type BodyParts, bodyBytes, bodyChunks, bodyStart, type PiecesTail } from './assemble.js';
import { sha256Hex } from './integrity.js';

/**
 * A body whose tail is pieces of at least this many bytes (a catalog body: 107 MB at 2,000 models, a list artifact)
 * is made in chunks of STREAM_CHUNK_BYTES for each use (hashed, written, compressed), never whole: memory then does
 * not grow with the largest body of a catalog.
 */
export const LARGE_BODY_BYTES = 8 * 1024 * 1024;
/** A streamed body's chunk: what it holds in memory at a time. */
export const STREAM_CHUNK_BYTES = 2 * 1024 * 1024;

/**
 * A body's bytes as the writer uses them: whole, or for a large body (LARGE_BODY_BYTES) made again in chunks for each
 * use.
 */
export type Made = { revision: string; size: number; sha256: string } & (
  | { whole: Buffer; chunks?: undefined }
  | { whole: null; chunks: () => Iterable<Buffer> }
);

/**
 * The body of `parts` that names the first of `revisions` whose bytes have the sha256 `wanted`, else the last: an
 * unchanged body keeps the previous revision. With `known`, the sha256 of the body naming the one revision given: it
 * is not computed.
 */
export function made(
  parts: BodyParts,
  revisions: readonly string[],
  wanted: string | undefined,
  largeBodyBytes: number,
  known?: string,
): Made {
  const { tail } = parts;
  if (typeof tail === 'object' && 'pieces' in tail && tail.size >= largeBodyBytes) {
    return streamed({ head: parts.head, tail }, revisions, wanted, known);
  }
  // No closure here: one would keep the parts (a page's text) alive until the body is compressed.
  for (let i = 0; ; i++) {
    const whole = bodyBytes(parts, revisions[i]!);
    const digest = known ?? sha256Hex(whole);
    if (digest === wanted || i === revisions.length - 1)
      return { revision: revisions[i]!, size: whole.length, sha256: digest, whole };
  }
}

/** made() for a large body: hashed naming each of `revisions` in one pass over its chunks, and never whole. */
function streamed(
  parts: BodyParts & { tail: PiecesTail },
  revisions: readonly string[],
  wanted: string | undefined,
  known: string | undefined,
): Made {
  const digests = known === undefined ? hashedNaming(parts, revisions) : [known];
  const at = wanted === undefined ? -1 : digests.indexOf(wanted);
  const i = at >= 0 ? at : revisions.length - 1;
  const revision = revisions[i]!;
  return {
    revision,
    size: Buffer.byteLength(bodyStart(parts, revision)) + parts.tail.size,
    sha256: digests[i]!,
    whole: null,
    chunks: () => bodyChunks(parts, revision, STREAM_CHUNK_BYTES),
  };
}

/** The sha256 of a large body naming each of `revisions`, in one pass over its chunks. */
function hashedNaming(parts: BodyParts & { tail: PiecesTail }, revisions: readonly string[]): string[] {
  const hashes = revisions.map((r) => createHash('sha256').update(bodyStart(parts, r)));
  let first = true; // bodyChunks' first chunk is the start, hashed above for each revision
  for (const chunk of bodyChunks(parts, revisions[0]!, STREAM_CHUNK_BYTES)) {
    if (!first) for (const h of hashes) h.update(chunk);
    first = false;
  }
  return hashes.map((h) => h.digest('hex'));
}
