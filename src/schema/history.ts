// Published shapes of an offer's dated prices: GET /api/v1/models/{slug}/prices[?at=] and GET /api/v1/prices?at=,
// and the artifact the gateway picks the rows of a day from.
import { z } from 'zod';
import { Attribution } from './api.js';
import { RevisionId } from './primitives.js';
import { PriceCard, PricePrecision, ProviderId } from './source.js';

/** A calendar day, as `at` and the ranges write it. */
export const IsoDay = z.iso.date().describe('A calendar date, YYYY-MM-DD (UTC)');

/** One price of an offer over a range of days, as one source states it. */
export const PriceRow = z
  .strictObject({
    effective_from: IsoDay.nullable().describe(
      'The first day in force (models-dev: the day the change reached its repository, not a vendor announcement); ' +
        "null where the source gives no start (genai-prices' first price of a model): in force every day before effective_to",
    ),
    effective_to: IsoDay.nullable().describe('The first day no longer in force (exclusive); null on the current row'),
    ...PriceCard.shape,
    source: z.string().describe('Where the row comes from: models-dev (its git history) or genai-prices'),
    precision: PricePrecision.describe(
      "How sure effective_from is: announced (the vendor's date), commit_date (when the change reached the source's " +
        'repository), observed (when someone saw it)',
    ),
    first_seen: z
      .boolean()
      .describe('The price when the source began listing the offer: not a price change, and not a launch price'),
    likely_correction: z
      .boolean()
      .describe('A heuristic says this row corrects an earlier value (a typo fixed), not a price change'),
    announced_future: z.boolean().describe('Announced before it took effect'),
  })
  .describe("An offer's price card over a range of days, from one source");
export type PriceRow = z.infer<typeof PriceRow>;

/** Whether a row is in force on a day (YYYY-MM-DD): its effective_from is, its effective_to is not. */
export const inForce = (r: PriceRow, day: string): boolean =>
  (r.effective_from === null || r.effective_from <= day) && (r.effective_to === null || day < r.effective_to);

export const OfferHistory = z
  .strictObject({
    provider: ProviderId.describe('The provider id'),
    provider_model_id: z.string().describe('The model id a client sends to this provider'),
    first_party: z.boolean().describe("true when the provider is the model's developer"),
    history: z
      .array(PriceRow)
      .describe('Oldest first; with ?at= only the rows in force that day, at most one per source'),
  })
  .describe("One offer's dated prices");
export type OfferHistory = z.infer<typeof OfferHistory>;

/** The envelope of the price routes: not localized, so no locale. */
const pricesEnvelope = <T extends z.ZodType>(data: T) =>
  z.strictObject({
    schemaVersion: z.string(),
    publicationRevision: RevisionId.describe(
      'The revision that last changed the data this answer is made from; the current one is in X-Publication-Revision',
    ),
    tier: z.literal('free'),
    attribution: Attribution,
    data,
  });

/** GET /api/v1/models/{slug}/prices[?at=YYYY-MM-DD]. */
export const ModelPricesResponse = pricesEnvelope(
  z.strictObject({
    slug: z.string(),
    offers: z
      .array(OfferHistory)
      .describe('The offers with dated prices (with ?at=, those with a row in force that day); first-party first'),
  }),
);

export const HeadlinePriceRow = z.strictObject({
  slug: z.string(),
  provider: ProviderId,
  provider_model_id: z.string(),
  row: PriceRow.describe("The headline offer's row in force that day (announced preferred over commit_date)"),
});
/** GET /api/v1/prices?at=YYYY-MM-DD. */
export const PricesAtResponse = pricesEnvelope(
  z.strictObject({
    at: IsoDay,
    models: z
      .array(HeadlinePriceRow)
      .describe(
        "Each model once, by slug, with its headline offer's row in force that day; a model without one is left out",
      ),
  }),
);

/** artifacts/prices.json: every model's offer histories and headline offer, for the gateway to pick a day's rows. */
export const PricesArtifact = z.strictObject({
  schemaVersion: z.string(),
  attribution: Attribution,
  models: z.record(
    z.string(),
    z.strictObject({
      offers: z.array(OfferHistory),
      /** Index into offers of the headline offer, or null. */
      headline: z.number().int().min(0).nullable(),
    }),
  ),
});
export type PricesArtifact = z.infer<typeof PricesArtifact>;
/** The file as written: the artifact with its kind and the revision that wrote it (render-prices.ts assembles them). */
export const PricesArtifactFile = z.strictObject({
  kind: z.literal('modelpub.prices-artifact'),
  publicationRevision: RevisionId,
  ...PricesArtifact.shape,
});
