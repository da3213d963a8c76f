// The inputs digest of a body: what it is assembled from, hashed without assembling it. Each part of a model (its
// detail and list item per locale, each include section) is serialized once per lane variant and hashed; a body's
// digest combines the digests of its parts with what else it holds (envelope, page, order). The writer carries a body
// over from the previous release when its digest is unchanged (publication/writer.ts), so the digest must cover every
// byte of the body but its revision; CODE folds in the source of the functions that assemble bodies, so that a
// modelpub that assembles them otherwise makes every body again.
import { hash } from 'node:crypto';
import {
  artifactParts,
  envelopeParts,
  innerJson,
  listDataJson,
  sectionsJson,
  withSections,
} from '../publication/assemble.js';
import { INCLUDES, type Include } from '../schema/api.js';
import type { Locale } from '../schema/source.js';

/** One digest of several strings (none holds a raw newline: JSON, digests and numbers). */
export const digestOf = (...parts: readonly (string | number)[]): string =>
  hash('sha256', parts.join('\n'), 'base64url').slice(0, 22);

/** The digest of one part's JSON. */
export const jsonDigest = (json: string): string => hash('sha256', json, 'base64url').slice(0, 22);

/** The functions that assemble bodies from parts: their source is part of every digest (codeDigest). */
const ASSEMBLY = [artifactParts, envelopeParts, innerJson, listDataJson, sectionsJson, withSections];

/** The digest of the assembling code: these functions and the body generators that call them (their source). */
export const codeDigest = (generators: readonly { toString(): string }[]): string =>
  digestOf(...[...ASSEMBLY, ...generators].map(String));

/** The digests of a model's include sections, as withSections splices them in for `include`. */
export const sectionDigests = (d: Record<Include, string>, include: readonly Include[]): string =>
  INCLUDES.map((i) => (include.includes(i) ? d[i] : '-')).join(',');

/** The digests of a lane variant's parts, per model: detail and item per locale, include sections. */
export interface VariantDigests {
  detail: Map<string, Record<Locale, string>>;
  sections: Map<string, Record<Include, string>>;
  item: Map<string, Record<Locale, string>>;
  itemSections: Map<string, Record<Include, string>>;
}

/** The digest of each include section's JSON, per model. */
export const digestMap = (jsons: Map<string, Record<Include, string>>): Map<string, Record<Include, string>> =>
  new Map(
    [...jsons].map(([slug, j]) => [
      slug,
      {
        benchmarks: jsonDigest(j.benchmarks),
        capabilities: jsonDigest(j.capabilities),
        pricing: jsonDigest(j.pricing),
      },
    ]),
  );
