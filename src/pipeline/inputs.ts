// The inputs digest of a body: what it is assembled from, hashed without assembling it. Each part of a model (its
// detail and list item per locale, each include section) is serialized once per lane variant and hashed; a body's
// digest combines the digests of its parts with what else it holds (envelope, page, order). The writer carries a body
// over from the previous release when its digest is unchanged (publication/writer.ts), so the digest must cover every
// byte of the body but its revision; CODE folds in the source of the functions that assemble bodies, so that a
// modelpub that assembles them otherwise makes every body again.
import { hash } from 'node:crypto';
import {
  artifactModelPieces,
  artifactParts,
  envelopeBytes,
  envelopeParts,
  innerJson,
  joinedBytes,
  listDataJson,
  sectionPieces,
  sectionsJson,
  withSections,
} from '../publication/assemble.js';
import { INCLUDES, type Include } from '../schema/api.js';
import { LOCALES, type Locale } from '../schema/source.js';
import type { ModelParts } from './render.js';

/** One digest of several strings (none holds a raw newline: JSON, digests and numbers). */
export const digestOf = (...parts: readonly (string | number)[]): string =>
  hash('sha256', parts.join('\n'), 'base64url').slice(0, 22);

/** The digest of one part's JSON. */
export const jsonDigest = (json: string): string => hash('sha256', json, 'base64url').slice(0, 22);

/** The functions that assemble bodies from parts: their source is part of every digest (codeDigest). */
const ASSEMBLY = [
  artifactModelPieces,
  artifactParts,
  envelopeBytes,
  envelopeParts,
  innerJson,
  joinedBytes,
  listDataJson,
  sectionPieces,
  sectionsJson,
  withSections,
];

/** The digest of the assembling code: these functions and the body generators that call them (their source). */
export const codeDigest = (generators: readonly { toString(): string }[]): string =>
  digestOf(...[...ASSEMBLY, ...generators].map(String));

/** The digests of a model's include sections, as withSections splices them in for `include`. */
export const sectionDigests = (d: Record<Include, string>, include: readonly Include[]): string =>
  INCLUDES.map((i) => (include.includes(i) ? d[i] : '-')).join(',');

/** A digest per key of a record of JSON strings. */
const digestsOf = <K extends string>(jsons: Record<K, string>): Record<K, string> =>
  Object.fromEntries(Object.entries<string>(jsons).map(([k, j]) => [k, jsonDigest(j)])) as Record<K, string>;

/**
 * A model's parts as JSON, what its bodies are assembled from, and their digests. A lane variant keeps it but for
 * `detail` and `sections` (the catalog keeps those as bytes: render-catalog.ts) for its list pages and list artifact.
 */
export interface ModelJson {
  /** The list item's and the detail's core, per locale. */
  item: Record<Locale, string>;
  detail: Record<Locale, string>;
  /** The include sections (sectionsJson) of the list item and of the detail. */
  itemSections: Record<Include, string>;
  sections: Record<Include, string>;
  search: string;
  facets: string;
  digests: {
    item: Record<Locale, string>;
    detail: Record<Locale, string>;
    itemSections: Record<Include, string>;
    sections: Record<Include, string>;
    /** Of search and facets. */
    rest: string;
  };
}

/** What a lane variant keeps of a model for its list pages and list artifact: the catalog keeps the rest as bytes. */
export type KeptJson = Omit<ModelJson, 'detail' | 'sections'>;

export function modelJson(m: ModelParts): ModelJson {
  const json = {
    item: Object.fromEntries(LOCALES.map((l) => [l, JSON.stringify(m.item[l])])) as Record<Locale, string>,
    detail: Object.fromEntries(LOCALES.map((l) => [l, JSON.stringify(m.detail[l])])) as Record<Locale, string>,
    itemSections: sectionsJson(m.itemSections),
    sections: sectionsJson(m.sections),
    search: JSON.stringify(m.search),
    facets: JSON.stringify(m.facets),
  };
  return {
    ...json,
    digests: {
      item: digestsOf(json.item),
      detail: digestsOf(json.detail),
      itemSections: digestsOf(json.itemSections),
      sections: digestsOf(json.sections),
      rest: digestOf(json.search, json.facets),
    },
  };
}
