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
   * Bytes for a body too large to hold as a string (a catalog of every model: 100 MB at 2,000 models), which its
   * concatenations and encodings would copy several times over.
   */
  tail: string | Buffer;
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
): BodyParts & { tail: string } {
  return {
    head: `{"schemaVersion":${JSON.stringify(schemaVersion)},"publicationRevision":`,
    tail: `,"tier":"${TIER}","locale":"${locale}","attribution":${attributionJson},"data":${dataJson}}`,
  };
}

/** envelopeParts for data given as pieces of its JSON, each made into bytes as it comes: the tail is bytes. */
export function envelopeBytes(
  schemaVersion: string,
  locale: Locale,
  attributionJson: string,
  dataPieces: Iterable<string>,
): BodyParts {
  const { head, tail } = envelopeParts(schemaVersion, locale, attributionJson, '');
  const chunks = [Buffer.from(tail.slice(0, -1))];
  for (const piece of dataPieces) chunks.push(Buffer.from(piece));
  chunks.push(Buffer.from('}'));
  return { head, tail: Buffer.concat(chunks) };
}

export function listDataJson(itemJsons: readonly string[], page: number, pageSize: number, total: number): string {
  const pagination = { page, page_size: pageSize, total, total_pages: Math.ceil(total / pageSize) };
  return `{"models":[${itemJsons.join(',')}],"pagination":${JSON.stringify(pagination)}}`;
}

/** A list artifact's parts: its kind first, then its revision, then the rest in schema order. */
export function artifactParts(a: Omit<ListArtifact, 'kind' | 'publicationRevision'>): BodyParts {
  const rest: Omit<ListArtifact, 'kind' | 'publicationRevision'> = {
    schemaVersion: a.schemaVersion,
    attribution: a.attribution,
    prebuiltPageSizes: a.prebuiltPageSizes,
    orders: a.orders,
    models: a.models,
  };
  return { head: '{"kind":"modelpub.list-artifact","publicationRevision":', tail: `,${innerJson(rest)}}` };
}
