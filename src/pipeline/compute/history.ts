// Each offer's published price history (docs/api.md, "Prices over time"), from its dated prices, per source:
//   - a row the source stopped listing (`removed`) ends at its effective_to: that source has no price until its next;
//   - a row whose range is empty is dropped;
//   - a short-lived row (replaced within 72 hours) is dropped, the row before it staying in force until the next kept;
//   - consecutive rows that then carry the same prices merge: the earlier effective_from, first_seen and precision,
//     likely_correction if any of them was.
import type { OfferHistory, PriceRow } from '../../schema/history.js';
import { cardPrices } from './offers.js';
import { PRICE_FIELDS, type OfferRecord, type PriceHistoryRecord, type PriceObservation } from '../../schema/source.js';

export interface ModelHistory {
  offers: OfferHistory[];
  /** Index into offers of the headline offer, or null. */
  headline: number | null;
}

type Offer = { provider: string; provider_model_id: string };
const offerKey = (o: Offer) => `${o.provider}\u0000${o.provider_model_id}`;
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const start = (r: { effective_from: string | null }) => r.effective_from ?? '';

/** The prices a row carries, as one comparable string. */
const pricesOf = (r: PriceHistoryRecord) =>
  JSON.stringify([...PRICE_FIELDS.map((f) => r[f]), r.tiers, r.modes, Object.entries(r.other_prices).sort()]);

/** One offer's rows of one source, by start: the range rules above. */
export function rangedRows(records: readonly PriceHistoryRecord[]): PriceHistoryRecord[] {
  const sorted = [...records].sort((a, b) => cmp(start(a), start(b)));
  const kept: PriceHistoryRecord[] = [];
  for (const r of sorted) {
    const empty = r.effective_from !== null && r.effective_to !== null && r.effective_to <= r.effective_from;
    if (empty) continue;
    const prev = kept.at(-1);
    if (r.short_lived) {
      // The previous row stays in force over the dropped one's days (a dropped row ending in a removal ends it too).
      if (prev && prev.effective_to === r.effective_from)
        kept[kept.length - 1] = { ...prev, effective_to: r.effective_to, removed: r.removed };
      continue;
    }
    if (prev && prev.effective_to === r.effective_from && pricesOf(prev) === pricesOf(r)) {
      kept[kept.length - 1] = {
        ...prev,
        effective_to: r.effective_to,
        removed: r.removed,
        likely_correction: prev.likely_correction || r.likely_correction,
      };
      continue;
    }
    kept.push(r);
  }
  return kept;
}

export const publishedRow = (r: PriceHistoryRecord): PriceRow => ({
  effective_from: r.effective_from,
  effective_to: r.effective_to,
  ...cardPrices(r),
  tiers: r.tiers,
  modes: r.modes,
  other_prices: r.other_prices,
  source: r.provenance.source,
  precision: r.precision,
  first_seen: r.first_seen,
  likely_correction: r.likely_correction,
  announced_future: r.announced_future,
});

/**
 * Every model's offers with their published history (offers without any row left out), first-party offers first,
 * then by provider and id; `headline`: the offer a model's headline price is read from.
 */
export function priceHistories(
  records: readonly PriceHistoryRecord[],
  offers: readonly OfferRecord[],
  headlines: ReadonlyMap<string, Offer>,
): Map<string, ModelHistory> {
  const byOffer = new Map<string, Map<string, PriceHistoryRecord[]>>(); // offer -> source -> records
  for (const r of records) {
    const k = offerKey(r);
    let bySource = byOffer.get(k);
    if (!bySource) byOffer.set(k, (bySource = new Map()));
    const list = bySource.get(r.provenance.source);
    if (list) list.push(r);
    else bySource.set(r.provenance.source, [r]);
  }
  const out = new Map<string, ModelHistory>();
  const ordered = [...offers].sort(
    (a, b) =>
      cmp(a.model, b.model) ||
      Number(b.first_party) - Number(a.first_party) ||
      cmp(a.provider, b.provider) ||
      cmp(a.provider_model_id, b.provider_model_id),
  );
  for (const o of ordered) {
    const bySource = byOffer.get(offerKey(o));
    if (!bySource) continue;
    const rows = [...bySource.keys()]
      .sort()
      .flatMap((source) => rangedRows(bySource.get(source)!))
      .sort((a, b) => cmp(start(a), start(b)) || cmp(a.provenance.source, b.provenance.source));
    if (!rows.length) continue;
    let m = out.get(o.model);
    if (!m) out.set(o.model, (m = { offers: [], headline: null }));
    m.offers.push({
      provider: o.provider,
      provider_model_id: o.provider_model_id,
      first_party: o.first_party,
      history: rows.map(publishedRow),
    });
  }
  for (const [slug, m] of out) {
    const h = headlines.get(slug);
    const i = h ? m.offers.findIndex((o) => offerKey(o) === offerKey(h)) : -1;
    m.headline = i === -1 ? null : i;
  }
  return out;
}

/** Each model's headline offer: the one its newest price observation names. */
export function headlineOffers(prices: readonly PriceObservation[]): Map<string, Offer> {
  const newest = new Map<string, PriceObservation>();
  for (const p of prices) {
    const seen = newest.get(p.model);
    if (p.offer && (!seen || p.observed_at > seen.observed_at)) newest.set(p.model, p);
  }
  return new Map([...newest].map(([slug, p]) => [slug, p.offer!]));
}

/**
 * `price_since` of a model's pricing: the effective_from of its headline offer's current models-dev row, or null
 * when that row is first_seen (the day the source began listing the offer, not a price change) or there is none.
 */
export function priceSince(m: ModelHistory | undefined): string | null {
  if (!m || m.headline === null) return null;
  const current = m.offers[m.headline]!.history.find((r) => r.source === 'models-dev' && r.effective_to === null);
  return current && !current.first_seen ? current.effective_from : null;
}
