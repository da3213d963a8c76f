// The bodies of the dated prices: each model's whole history (GET /api/v1/models/{slug}/prices), and the artifact the
// gateway picks a day's rows from (?at=, GET /api/v1/prices?at=): compute/history.ts made both.
import { innerJson, TIER } from '../publication/assemble.js';
import { PRICES_ARTIFACT, pricesFile } from '../publication/layout.js';
import type { PendingBody } from '../publication/writer.js';
import type { Computed } from './compute/index.js';

/** The envelope of the price routes around `dataJson`; the writer puts the revision between head and tail. */
export const pricesEnvelopeParts = (schemaVersion: string, attributionJson: string, dataJson: string) => ({
  head: `{"schemaVersion":${JSON.stringify(schemaVersion)},"publicationRevision":`,
  tail: `,"tier":"${TIER}","attribution":${attributionJson},"data":${dataJson}}`,
});

/** How many bodies pricesBodies yields: one per model with dated prices, and the artifact. */
export const countPriceBodies = (c: Computed): number => c.history.size + 1;

export function* pricesBodies(c: Computed, attributionJson: string): Generator<PendingBody> {
  const schemaVersion = c.data.site.schema_version;
  const slugs = [...c.history.keys()].sort();
  for (const slug of slugs) {
    const data = JSON.stringify({ slug, offers: c.history.get(slug)!.offers });
    yield { path: pricesFile(slug), ...pricesEnvelopeParts(schemaVersion, attributionJson, data) };
  }
  const models = Object.fromEntries(slugs.map((slug) => [slug, c.history.get(slug)!]));
  yield {
    path: PRICES_ARTIFACT,
    head: '{"kind":"modelpub.prices-artifact","publicationRevision":',
    tail: `,"schemaVersion":${JSON.stringify(schemaVersion)},"attribution":${attributionJson},${innerJson({ models })}}`,
  };
}
