// Every body a release holds, in the order the build writes them: one lane at a time (its public and display variants
// side by side), one model's parts at a time: memory holds a lane's models as JSON (ModelJson) and catalog bytes
// (CatalogPieces), not their objects. The count and the bodies come from one description of the layout, so a progress
// bar's total cannot drift from what is written.
import { tmpdir } from 'node:os';
import { QUERY_LANES, type QueryLane, SORTS, type Attribution } from '../schema/api.js';
import { LOCALES, type Locale } from '../schema/source.js';
import {
  artifactModelPieces,
  artifactParts,
  attributionOf,
  envelopeParts,
  listDataJson,
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
import type { Leaderboard } from './compute/ranks.js';
import { codeDigest, digestOf, type KeptJson, sectionDigests } from './inputs.js';
import { PartsStore } from './parts-store.js';
import { type BoardDigest, type VariantRenderer, variantRenderer } from './render.js';
import { CATALOG_BODIES, CatalogBodies, CatalogPieces } from './render-catalog.js';
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
const variantBodyCount = (models: number, pageSizes: readonly number[]) =>
  LOCALES.length * INCLUDE_SUBSETS.length * (models + SORTS.length * listPages(models, pageSizes).length) + 1;

export function countBodies(c: Computed, pageSizes: readonly number[]): number {
  return (
    LANE_VARIANTS.reduce((n, v) => n + variantBodyCount(c.lanes[v.lane].models.length, pageSizes), 0) +
    CATALOG_BODIES +
    countPriceBodies(c)
  );
}

/**
 * `parts`: where the models' parts are kept, with those of the last build (the build's; by default every model is
 * rendered, into a file in the system's temporary folder).
 */
export function* bodies(
  c: Computed,
  pageSizes: readonly number[],
  parts = PartsStore.scratch(tmpdir()),
): Generator<PendingBody> {
  const schemaVersion = c.data.site.schema_version;
  const attribution = attributionOf(c.data.site);
  const attributionJson = JSON.stringify(attribution);
  const code = codeDigest([bodies, laneBodies, listBodies, artifactBody, CatalogBodies, CatalogPieces]);
  // The envelope of each locale, with the assembling code: the start of every API body's digest.
  const envelopes = Object.fromEntries(
    LOCALES.map((l) => {
      const { head, tail } = envelopeParts(schemaVersion, l, attributionJson, '');
      return [l, digestOf(code, head, tail)];
    }),
  ) as Record<Locale, string>;
  const catalog = new CatalogBodies(c, attributionJson, envelopes);
  const o: BodyOptions = { schemaVersion, attribution, attributionJson, code, envelopes, pageSizes, parts };
  // The lanes of the largest catalog bodies first (a catalog entry is mostly its benchmark entries): the last ones are
  // compressed with nothing left to make beside them.
  const weight = (lane: QueryLane) => [...c.lanes[lane].boards.values()].reduce((n, b) => n + b.rows.length, 0);
  const bySize = [...QUERY_LANES].sort((a, b) => weight(b) - weight(a));
  for (const lane of bySize) yield* laneBodies(c, lane, o, catalog);
  yield* pricesBodies(c, attributionJson);
  yield* catalog.finish();
}

interface BodyOptions {
  schemaVersion: string;
  attribution: Attribution;
  attributionJson: string;
  /** codeDigest of the assembling code, and each locale's envelope digest (which starts from it). */
  code: string;
  envelopes: Record<Locale, string>;
  pageSizes: readonly number[];
  parts: PartsStore;
}

/** A lane variant as laneBodies makes it: its renderer, what it keeps of each model, its catalog pieces. */
interface Variant {
  r: VariantRenderer;
  models: Map<string, KeptJson>;
  pieces: CatalogPieces;
}

/**
 * One lane's bodies, its public and display variants side by side. A model's parts are rendered when its details are
 * made, once for both variants unless a display override reaches them (most models it does not), and kept only as
 * JSON (ModelJson) for the list pages, the list artifact and the catalog bodies, which need every model of the
 * variant; all of it is let go before the next lane.
 */
function* laneBodies(c: Computed, lane: QueryLane, o: BodyOptions, catalog: CatalogBodies): Generator<PendingBody> {
  const boards = new Map<Leaderboard, BoardDigest>(); // the digests of the lane's boards, made once for both variants
  const variants = [false, true].map(
    (displayOnly): Variant => ({
      r: variantRenderer(c, lane, displayOnly, boards),
      models: new Map(),
      pieces: new CatalogPieces(o.parts.file),
    }),
  );
  const [pub, display] = variants as [Variant, Variant];
  for (const slug of pub.r.slugs) {
    const own = o.parts.model(pub.r, slug);
    const shown = display.r.overridden(slug) ? o.parts.model(display.r, slug) : own;
    for (const [v, stored] of [
      [pub, own],
      [display, shown],
    ] as const) {
      const m = stored.json;
      v.models.set(slug, m);
      if (v === display && stored === own) v.pieces.alias(slug, pub.pieces);
      else v.pieces.at(slug, stored.pieces);
      for (const locale of LOCALES) {
        for (const include of INCLUDE_SUBSETS) {
          yield {
            path: detailFile({ lane, displayOnly: v.r.displayOnly, slug, locale, include }),
            inputs: digestOf(
              o.envelopes[locale],
              m.digests.detail[locale],
              sectionDigests(m.digests.sections, include),
            ),
            render: () => {
              const { detail, sections } = stored.texts();
              return envelopeParts(
                o.schemaVersion,
                locale,
                o.attributionJson,
                withSections(detail[locale], sections, include),
              );
            },
          };
        }
      }
    }
  }
  // The catalog bodies before the lists: their compression, the longest, goes on while the lists are made.
  for (const v of variants) yield* catalog.variant(v.r, v.models, v.pieces);
  for (const v of variants) {
    yield* listBodies(v.r, o, v.models);
    yield artifactBody(v.r, o, v.models);
  }
}

/** A variant's list pages: each page's items assembled from their JSON when the page is made. */
function* listBodies(r: VariantRenderer, o: BodyOptions, models: Map<string, KeptJson>): Generator<PendingBody> {
  for (const locale of LOCALES) {
    for (const include of INCLUDE_SUBSETS) {
      const itemJson = (slug: string) => {
        const m = models.get(slug)!;
        return withSections(m.item[locale], m.itemSections, include);
      };
      // Once per model, not per page it is on: every sort and page size shows each model again.
      const itemDigests = new Map<string, string>();
      const itemDigest = (slug: string) => {
        let digest = itemDigests.get(slug);
        if (digest === undefined) {
          const d = models.get(slug)!.digests;
          itemDigests.set(slug, (digest = `${d.item[locale]}:${sectionDigests(d.itemSections, include)}`));
        }
        return digest;
      };
      for (const sort of SORTS) {
        const order = r.orders[sort];
        for (const { pageSize, page } of listPages(order.length, o.pageSizes)) {
          const pageSlugs = order.slice((page - 1) * pageSize, page * pageSize);
          yield {
            path: listFile({ lane: r.lane, displayOnly: r.displayOnly, locale, include, sort, page, pageSize }),
            inputs: digestOf(o.envelopes[locale], page, pageSize, order.length, ...pageSlugs.map(itemDigest)),
            render: () =>
              envelopeParts(
                o.schemaVersion,
                locale,
                o.attributionJson,
                listDataJson(pageSlugs.map(itemJson), page, pageSize, order.length),
              ),
          };
        }
      }
    }
  }
}

/** The variant's list artifact: every model's item, item sections, search and facets, assembled from their JSON. */
function artifactBody(r: VariantRenderer, o: BodyOptions, models: Map<string, KeptJson>): PendingBody {
  // The models in the order of an object's keys (an integer-like slug first), as the artifact's object has them.
  const keys = Object.keys(Object.fromEntries(r.slugs.map((s) => [s, 0])));
  const prebuiltPageSizes = [...o.pageSizes];
  return {
    path: artifactFile(r),
    inputs: digestOf(
      o.code,
      o.schemaVersion,
      o.attributionJson,
      JSON.stringify(prebuiltPageSizes),
      JSON.stringify(r.orders),
      ...keys.map((slug) => {
        const d = models.get(slug)!.digests;
        return `${slug}:${Object.values(d.item).join()}:${Object.values(d.itemSections).join()}:${d.rest}`;
      }),
    ),
    render: () =>
      artifactParts(
        { schemaVersion: o.schemaVersion, attribution: o.attribution, prebuiltPageSizes, orders: r.orders },
        () =>
          keys.map((slug) => {
            const m = models.get(slug)!;
            return [slug, artifactModelPieces(m.item, m.itemSections, m.search, m.facets)] as const;
          }),
      ),
  };
}
