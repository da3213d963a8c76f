// Offers and the price card (docs/api.md "Offers and the price card"). Every offer of a model is published, ordered
// by blended price (3:1, as the headline), then provider, then provider model id; an offer without both an input and
// an output price, or a reseller's free 0/0 listing, is unpriced and comes last. The headline prices stay those of
// the price observations (prices.ts); the card adds the rest of the offer they name.
import {
  isFreeListing,
  type OfferRecord,
  PRICE_FIELDS,
  type PriceCard,
  type PriceField,
  type ProviderRecord,
} from '../../schema/source.js';
import type { Offer, PricingCard, PricingDetail } from '../../schema/api.js';
import { toInstant } from '../validate.js';
import { blended, type PriceSummary } from './prices.js';

/** The key an offer is named by in diffs and the changes feed: `groq/openai/gpt-oss-120b`. */
export const offerKey = (o: { provider: string; provider_model_id: string }): string =>
  `${o.provider}/${o.provider_model_id}`;

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The blended price an offer is ordered by, or null when it is unpriced (no input or output price, or free). */
function orderPrice(o: Offer): number | null {
  if (o.free || o.input_price_per_million === null || o.output_price_per_million === null) return null;
  return blended(o.input_price_per_million, o.output_price_per_million);
}

function compareOffers(a: Offer, b: Offer): number {
  const [pa, pb] = [orderPrice(a), orderPrice(b)];
  if (pa !== pb) {
    if (pa === null) return 1;
    if (pb === null) return -1;
    return pa - pb;
  }
  return byCodePoint(a.provider, b.provider) || byCodePoint(a.provider_model_id, b.provider_model_id);
}

/** A card's seven prices, in the schema's order: an offer and a dated price row publish them alike. */
export const cardPrices = (r: Pick<PriceCard, PriceField>): Pick<PriceCard, PriceField> =>
  Object.fromEntries(PRICE_FIELDS.map((f) => [f, r[f]])) as Pick<PriceCard, PriceField>;

/** An offer record as published. */
function publishedOffer(r: OfferRecord, providerName: string): Offer {
  return {
    provider: r.provider,
    provider_name: providerName,
    provider_model_id: r.provider_model_id,
    first_party: r.first_party,
    ...cardPrices(r),
    tiers: r.tiers.map((t) => ({ ...t })),
    modes: Object.fromEntries(
      Object.keys(r.modes)
        .sort(byCodePoint)
        .map((k) => [k, { ...r.modes[k]! }]),
    ),
    other_prices: Object.fromEntries(
      Object.keys(r.other_prices)
        .sort(byCodePoint)
        .map((k) => [k, r.other_prices[k]!]),
    ),
    context_window_tokens: r.context_window_tokens,
    max_input_tokens: r.max_input_tokens,
    max_output_tokens: r.max_output_tokens,
    status: r.status,
    free: isFreeListing(r),
    updated_at: toInstant(r.updated_at),
  };
}

/** Every model's offers, published and ordered, by model slug. Offers of models not in `models` are left out. */
export function offersByModel(
  offers: readonly OfferRecord[],
  providers: readonly ProviderRecord[],
  models: ReadonlySet<string>,
): Map<string, Offer[]> {
  const names = new Map(providers.map((p) => [p.id, p.name]));
  const out = new Map<string, Offer[]>();
  for (const r of offers) {
    if (!models.has(r.model)) continue;
    const list = out.get(r.model) ?? [];
    list.push(publishedOffer(r, names.get(r.provider) ?? r.provider));
    out.set(r.model, list);
  }
  for (const list of out.values()) list.sort(compareOffers);
  return out;
}

const NO_CARD = {
  cache_read_price_per_million: null,
  cache_write_price_per_million: null,
  reasoning_price_per_million: null,
  input_audio_price_per_million: null,
  output_audio_price_per_million: null,
  tiers: [],
  modes: {},
} as const;

/**
 * A model's `pricing`: the headline prices of the lane (null fields when it has none), the headline offer's other
 * prices, tiers and modes, and its offers. null only for a model with neither an offer nor a headline price.
 */
export function pricingOf(
  price: PriceSummary | undefined,
  offers: readonly Offer[],
  priceSince: string | null,
): PricingDetail | null {
  if (!price && !offers.length) return null;
  const named = price?.offer ?? null;
  const headline =
    named && offers.find((o) => o.provider === named.provider && o.provider_model_id === named.provider_model_id);
  const card: PricingCard = {
    input_price_per_million: price?.input_price_per_million ?? null,
    output_price_per_million: price?.output_price_per_million ?? null,
    blended_price_per_million: price?.blended_price_per_million ?? null,
    updated_at: price?.updated_at ?? null,
    currency: 'USD',
    blended_weighting: '3:1 input:output',
    observations: price?.observations ?? 0,
    sources: price?.sources ?? [],
    price_since: price ? priceSince : null,
    headline_offer: headline ? { provider: headline.provider, provider_model_id: headline.provider_model_id } : null,
    ...(headline
      ? {
          cache_read_price_per_million: headline.cache_read_price_per_million,
          cache_write_price_per_million: headline.cache_write_price_per_million,
          reasoning_price_per_million: headline.reasoning_price_per_million,
          input_audio_price_per_million: headline.input_audio_price_per_million,
          output_audio_price_per_million: headline.output_audio_price_per_million,
          tiers: headline.tiers,
          modes: headline.modes,
        }
      : { ...NO_CARD, tiers: [], modes: {} }),
    offer_count: offers.length,
  };
  return { ...card, offers: [...offers] };
}

/** The card as list items carry it: without the offers. */
export function cardOf(p: PricingDetail | null): PricingCard | null {
  if (p === null) return null;
  const { offers: _offers, ...card } = p;
  return card;
}
