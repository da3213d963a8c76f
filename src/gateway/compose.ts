// List answers that are not prebuilt (a free-text q, a page size other than the prebuilt ones, a page past the end),
// composed from the build's list artifact with the build's own assembly functions: byte-identical to what the build
// would have written. Their publicationRevision and Last-Modified are the artifact's (the revision that last changed
// that lane's list data).
//
// Search (q): case- and accent-insensitive (NFKD, marks removed, lower case). The query is split on white space and
// every word must occur in the model's name, slug or description in the requested locale. Results are ordered by
// relevance tier, then by the requested sort: (0) the query equals the name or slug, (1) the name or slug starts
// with it, (2) the name or slug contains it, (3) the rest (matched through the description or across fields).
import { createHash } from 'node:crypto';
import type { Include, ManifestEntry, Sort } from '../schema/api.js';
import type { Locale } from '../schema/source.js';
import { envelopeParts, foldText, innerJson, listDataJson, withSections } from '../pipeline/render.js';
import { includeKey, type ListRequest } from '../routes.js';
import { bodyHeaders, etagOf, httpDate, type Publication, type ServedFile } from './publication.js';

interface ArtifactModel {
  item: Record<Locale, Record<string, unknown>>;
  sections: Record<Include, Record<string, unknown>>;
  search: { name: string; slug: string; text: Record<Locale, string> };
}
export interface ListArtifact {
  publicationRevision: string;
  schemaVersion: string;
  orders: Record<Sort, string[]>;
  models: Record<string, ArtifactModel>;
  entry: ManifestEntry;
  /** Serialized items by `<locale>.<include>`, made on first use. */
  items: Map<string, Map<string, string>>;
}

const MAX_COMPOSED = 5_000;

function itemJsons(a: ListArtifact, locale: Locale, include: Include[]): Map<string, string> {
  const key = `${locale}.${includeKey(include)}`;
  let m = a.items.get(key);
  if (!m) {
    m = new Map();
    for (const [slug, model] of Object.entries(a.models)) {
      const sections = { benchmarks: innerJson(model.sections.benchmarks), capabilities: innerJson(model.sections.capabilities), pricing: innerJson(model.sections.pricing) };
      m.set(slug, withSections(JSON.stringify(model.item[locale]), sections, include));
    }
    a.items.set(key, m);
  }
  return m;
}

export function searchOrder(a: ListArtifact, q: string, locale: Locale, sort: Sort): string[] {
  const query = foldText(q);
  const words = query.split(/\s+/).filter(Boolean);
  const tiers: string[][] = [[], [], [], []];
  for (const slug of a.orders[sort]) {
    const s = a.models[slug]!.search;
    const text = s.text[locale];
    if (!words.every((w) => text.includes(w))) continue;
    const tier = s.name === query || s.slug === query ? 0
      : s.name.startsWith(query) || s.slug.startsWith(query) ? 1
      : s.name.includes(query) || s.slug.includes(query) ? 2 : 3;
    tiers[tier]!.push(slug);
  }
  return tiers.flat();
}

export async function composeList(pub: Publication, r: ListRequest): Promise<ServedFile> {
  const cacheKey = `${r.locale}.${r.lane}.${r.displayOnly}.${includeKey(r.include)}.${r.sort}.${r.pageSize}.${r.page}.${r.q ?? ''}`;
  const hit = pub.composed.get(cacheKey);
  if (hit) return hit;
  const a = await pub.artifact(r.lane, r.displayOnly);
  const items = itemJsons(a, r.locale, r.include);
  const order = r.q === null ? a.orders[r.sort] : searchOrder(a, r.q, r.locale, r.sort);
  const page = order.slice((r.page - 1) * r.pageSize, r.page * r.pageSize).map((slug) => items.get(slug)!);
  const data = listDataJson(page, r.page, r.pageSize, order.length);
  const { head, tail } = envelopeParts(a.schemaVersion, r.locale, JSON.stringify(pub.meta.attribution), data);
  const body = Buffer.from(head + JSON.stringify(a.publicationRevision) + tail);
  const sha256 = createHash('sha256').update(body).digest('hex');
  const etag = etagOf(sha256);
  const lastModified = httpDate(a.entry.last_modified);
  const served: ServedFile = {
    entry: { ...a.entry, path: cacheKey, sha256, bytes: body.length },
    etag,
    lastModified,
    body,
    headers: bodyHeaders(etag, lastModified, pub.revision, pub.meta.schemaVersion),
  };
  if (pub.composed.size >= MAX_COMPOSED) pub.composed.delete(pub.composed.keys().next().value!);
  pub.composed.set(cacheKey, served);
  return served;
}
