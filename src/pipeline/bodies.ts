// Every body a release holds, in the order the build writes them: one lane variant (lane x display-only) at a time,
// so memory holds one variant's rendered parts. The count and the bodies come from one description of the layout
// (variantPlan), so a progress bar's total cannot drift from what is written.
import { QUERY_LANES, SORTS, type Include } from '../schema/api.js';
import { LOCALES, type Locale } from '../schema/source.js';
import {
  artifactParts,
  attributionOf,
  envelopeParts,
  listDataJson,
  sectionsJson,
  withSections,
} from '../publication/assemble.js';
import {
  artifactFile,
  detailFile,
  INCLUDE_SUBSETS,
  type LaneVariant,
  listFile,
  pageCount,
} from '../publication/layout.js';
import type { PendingBody } from '../publication/writer.js';
import type { Computed } from './compute/index.js';
import { codeDigest, digestMap, digestOf, jsonDigest, sectionDigests, type VariantDigests } from './inputs.js';
import { renderVariant, type VariantParts } from './render.js';
import { CATALOG_BODIES, CatalogBodies } from './render-catalog.js';
import { countPriceBodies, pricesBodies } from './render-prices.js';

export const LANE_VARIANTS: readonly LaneVariant[] = QUERY_LANES.flatMap((lane) =>
  [false, true].map((displayOnly) => ({ lane, displayOnly })),
);

/** The list pages of one list (one locale, include set and sort) of `total` items: each prebuilt size, each page. */
export const listPages = (total: number, pageSizes: readonly number[]) =>
  pageSizes.flatMap((pageSize) =>
    Array.from({ length: pageCount(total, pageSize) }, (_, i) => ({ pageSize, page: i + 1 })),
  );

/** How many bodies a lane variant of `models` models has: details, list pages, and its list artifact. */
const variantBodies = (models: number, pageSizes: readonly number[]) =>
  LOCALES.length * INCLUDE_SUBSETS.length * (models + SORTS.length * listPages(models, pageSizes).length) + 1;

export function countBodies(c: Computed, pageSizes: readonly number[]): number {
  return (
    LANE_VARIANTS.reduce((n, v) => n + variantBodies(c.lanes[v.lane].models.length, pageSizes), 0) +
    CATALOG_BODIES +
    countPriceBodies(c)
  );
}

export function* bodies(c: Computed, pageSizes: readonly number[]): Generator<PendingBody> {
  const schemaVersion = c.data.site.schema_version;
  const attribution = attributionOf(c.data.site);
  const attributionJson = JSON.stringify(attribution);
  const code = codeDigest([bodies, CatalogBodies]);
  // The envelope of each locale, with the assembling code: the start of every API body's digest.
  const envelopes = Object.fromEntries(
    LOCALES.map((l) => {
      const { head, tail } = envelopeParts(schemaVersion, l, attributionJson, '');
      return [l, digestOf(code, head, tail)];
    }),
  ) as Record<Locale, string>;
  const catalog = new CatalogBodies(c, attributionJson, envelopes);
  for (const v of LANE_VARIANTS) {
    const parts = renderVariant(c, v.lane, v.displayOnly);
    const slugs = Object.keys(parts.models);
    const sections = sectionJsons(parts, 'sections');
    const itemSections = sectionJsons(parts, 'itemSections');
    const digests: VariantDigests = {
      detail: new Map(),
      sections: digestMap(sections),
      item: new Map(slugs.map((slug) => [slug, {} as Record<Locale, string>])),
      itemSections: digestMap(itemSections),
    };
    for (const [slug, m] of Object.entries(parts.models)) {
      const mine = {} as Record<Locale, string>;
      for (const locale of LOCALES) {
        const detail = JSON.stringify(m.detail[locale]);
        mine[locale] = jsonDigest(detail);
        for (const include of INCLUDE_SUBSETS) {
          const path = detailFile({ ...v, slug, locale, include });
          yield {
            path,
            inputs: digestOf(envelopes[locale], mine[locale], sectionDigests(digests.sections.get(slug)!, include)),
            render: () =>
              envelopeParts(schemaVersion, locale, attributionJson, withSections(detail, sections.get(slug)!, include)),
          };
        }
      }
      digests.detail.set(slug, mine);
    }
    for (const locale of LOCALES) {
      const items = new Map(Object.entries(parts.models).map(([slug, m]) => [slug, JSON.stringify(m.item[locale])]));
      for (const [slug, j] of items) digests.item.get(slug)![locale] = jsonDigest(j);
      for (const include of INCLUDE_SUBSETS) {
        // The items with their sections are made only when a page of them is.
        let withInc: Map<string, string> | null = null;
        const itemJson = (slug: string) =>
          (withInc ??= new Map([...items].map(([s, j]) => [s, withSections(j, itemSections.get(s)!, include)]))).get(
            slug,
          )!;
        const itemDigest = new Map(
          slugs.map((s) => [
            s,
            `${digests.item.get(s)![locale]}:${sectionDigests(digests.itemSections.get(s)!, include)}`,
          ]),
        );
        for (const sort of SORTS) {
          const order = parts.orders[sort];
          for (const { pageSize, page } of listPages(order.length, pageSizes)) {
            const pageSlugs = order.slice((page - 1) * pageSize, page * pageSize);
            const path = listFile({ ...v, locale, include, sort, page, pageSize });
            yield {
              path,
              inputs: digestOf(
                envelopes[locale],
                page,
                pageSize,
                order.length,
                ...pageSlugs.map((s) => itemDigest.get(s)!),
              ),
              render: () =>
                envelopeParts(
                  schemaVersion,
                  locale,
                  attributionJson,
                  listDataJson(pageSlugs.map(itemJson), page, pageSize, order.length),
                ),
            };
          }
        }
      }
    }
    const models = Object.fromEntries(
      Object.entries(parts.models).map(([slug, m]) => [
        slug,
        { item: m.item, sections: m.itemSections, search: m.search, facets: m.facets },
      ]),
    );
    const artifact = { schemaVersion, attribution, prebuiltPageSizes: [...pageSizes], orders: parts.orders, models };
    yield {
      path: artifactFile(v),
      // Each model's entry serialized as the artifact holds it: the artifact is one body per variant, not per model.
      inputs: digestOf(
        code,
        schemaVersion,
        attributionJson,
        JSON.stringify(artifact.prebuiltPageSizes),
        JSON.stringify(parts.orders),
        ...Object.entries(models).map(([slug, m]) => `${slug}:${jsonDigest(JSON.stringify(m))}`),
      ),
      render: () => artifactParts(artifact),
    };
    yield* catalog.variant(parts, sections, digests);
  }
  yield* pricesBodies(c, attributionJson);
  yield* catalog.finish();
}

function sectionJsons(parts: VariantParts, which: 'sections' | 'itemSections'): Map<string, Record<Include, string>> {
  return new Map(Object.entries(parts.models).map(([slug, m]) => [slug, sectionsJson(m[which])]));
}
