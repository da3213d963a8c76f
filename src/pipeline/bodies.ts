// Every body a release holds, in the order the build writes them: one lane variant (lane x display-only) at a time,
// so memory holds one variant's rendered parts. The count and the bodies come from one description of the layout
// (variantPlan), so a progress bar's total cannot drift from what is written.
import { QUERY_LANES, SORTS, type Include } from '../schema/api.js';
import { LOCALES } from '../schema/source.js';
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
  const catalog = new CatalogBodies(c, attributionJson);
  for (const v of LANE_VARIANTS) {
    const parts = renderVariant(c, v.lane, v.displayOnly);
    const sections = sectionJsons(parts, 'sections');
    const itemSections = sectionJsons(parts, 'itemSections');
    for (const [slug, m] of Object.entries(parts.models)) {
      for (const locale of LOCALES) {
        const detail = JSON.stringify(m.detail[locale]);
        for (const include of INCLUDE_SUBSETS) {
          const data = withSections(detail, sections.get(slug)!, include);
          const path = detailFile({ ...v, slug, locale, include });
          yield { path, ...envelopeParts(schemaVersion, locale, attributionJson, data) };
        }
      }
    }
    for (const locale of LOCALES) {
      const items = new Map(Object.entries(parts.models).map(([slug, m]) => [slug, JSON.stringify(m.item[locale])]));
      for (const include of INCLUDE_SUBSETS) {
        const withInc = new Map(
          [...items].map(([slug, j]) => [slug, withSections(j, itemSections.get(slug)!, include)]),
        );
        for (const sort of SORTS) {
          const ordered = parts.orders[sort].map((s) => withInc.get(s)!);
          for (const { pageSize, page } of listPages(ordered.length, pageSizes)) {
            const pageItems = ordered.slice((page - 1) * pageSize, page * pageSize);
            const data = listDataJson(pageItems, page, pageSize, ordered.length);
            const path = listFile({ ...v, locale, include, sort, page, pageSize });
            yield { path, ...envelopeParts(schemaVersion, locale, attributionJson, data) };
          }
        }
      }
    }
    yield {
      path: artifactFile(v),
      ...artifactParts({
        schemaVersion,
        attribution,
        prebuiltPageSizes: [...pageSizes],
        orders: parts.orders,
        models: Object.fromEntries(
          Object.entries(parts.models).map(([slug, m]) => [
            slug,
            { item: m.item, sections: m.itemSections, search: m.search, facets: m.facets },
          ]),
        ),
      }),
    };
    yield* catalog.variant(parts, sections);
  }
  yield* pricesBodies(c, attributionJson);
  yield* catalog.finish();
}

function sectionJsons(parts: VariantParts, which: 'sections' | 'itemSections'): Map<string, Record<Include, string>> {
  return new Map(Object.entries(parts.models).map(([slug, m]) => [slug, sectionsJson(m[which])]));
}
