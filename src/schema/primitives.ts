// The small shapes every layer names: each pattern is written here once, and longer patterns (object keys, URL
// paths) are built from these sources rather than spelled out again.
import { z } from 'zod';

const anchored = (source: string): RegExp => new RegExp(`^${source}$`);

/** A sha256 digest as 64 lowercase hex digits, unanchored: the one source of every sha256 pattern. */
export const SHA256_HEX = '[0-9a-f]{64}';
export const SHA256_HEX_RE = anchored(SHA256_HEX);
export const Sha256Hex = z.string().regex(SHA256_HEX_RE, 'must be a sha256 hex digest (64 lowercase hex characters)');

/** A model slug: lowercase letters and digits in words joined by single hyphens, unanchored. */
export const SLUG = '[a-z0-9]+(?:-[a-z0-9]+)*';
export const SLUG_RE = anchored(SLUG);
export const Slug = z.string().regex(SLUG_RE, 'must be a slug: lowercase letters, digits and single hyphens');

/**
 * A publication revision id, unanchored: it names a release folder and is sent in a header, so one path segment of
 * ASCII letters, digits, '.', '_' and '-' (not starting with one of the three), at most 64 characters.
 */
export const REVISION_ID = '[A-Za-z0-9][A-Za-z0-9._-]{0,63}';
export const REVISION_ID_RE = anchored(REVISION_ID);
export const RevisionId = z
  .string()
  .regex(REVISION_ID_RE, "1 to 64 ASCII letters, digits, '.', '_' or '-', not starting with '.', '_' or '-'");

/** A published instant: ISO 8601 in UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
export const Instant = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO 8601 UTC with milliseconds');

/** The content type of every JSON body: API answers, publication files, remote objects. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
