// Composed answers (with q, or a page size not prebuilt) have no stored representations: the gateway compresses
// each one once, when a client accepts br or gzip, at levels fast enough to run on the request's thread.
import { type CompressionLevels, type ContentCoding, encode } from '../publication/compress.js';

/**
 * Measured on the largest list pages (docs/publication.md "Compression"): br quality 1 and gzip level 1 take a
 * fraction of a millisecond for a page of 50 models, and br 1 still sends fewer bytes than gzip at any level.
 */
export const ANSWER_LEVELS: Readonly<CompressionLevels> = { brotliQuality: 1, gzipLevel: 1 };

/** `body` compressed to `coding` at ANSWER_LEVELS, synchronously, in a buffer of its own (a cache can keep it). */
export function compressAnswer(body: Buffer, coding: ContentCoding): Buffer {
  return encode(body, coding, ANSWER_LEVELS);
}
