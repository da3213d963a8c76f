// Price summaries. Several observations combine as follows: the newest observation time wins; observations that
// share it are averaged (input and output separately). Blended = (3 x input + 1 x output) / 4.
// A reseller's 0/0 listing (first_party: false) is a free or unpriced offer, not the model's price: it is left out,
// so a model with nothing else is published with no price rather than as free.
import type { PriceObservation } from '../../schema/source.js';
import { toInstant } from '../validate.js';
import { round } from './numbers.js';

/** A model's headline price in a lane. */
export interface PriceSummary {
  input_price_per_million: number;
  output_price_per_million: number;
  blended_price_per_million: number;
  updated_at: string;
  observations: number;
  sources: string[];
  /** The offer the price is read from: the one every observation it rests on names, else null. */
  offer: { provider: string; provider_model_id: string } | null;
}

export const blended = (input: number, output: number): number => (3 * input + output) / 4;

export const isResellerZero = (o: PriceObservation): boolean =>
  !o.first_party && o.input_per_million === 0 && o.output_per_million === 0;

export function priceSummaries(observations: readonly PriceObservation[]): Map<string, PriceSummary> {
  const newest = new Map<string, { at: string; rows: PriceObservation[] }>();
  for (const o of observations) {
    if (isResellerZero(o)) continue;
    const at = toInstant(o.observed_at);
    const cur = newest.get(o.model);
    if (!cur || at > cur.at) newest.set(o.model, { at, rows: [o] });
    else if (at === cur.at) cur.rows.push(o);
  }
  const out = new Map<string, PriceSummary>();
  for (const [model, { at, rows }] of newest) {
    const input = rows.reduce((s, r) => s + r.input_per_million, 0) / rows.length;
    const output = rows.reduce((s, r) => s + r.output_per_million, 0) / rows.length;
    out.set(model, {
      input_price_per_million: round(input, 6),
      output_price_per_million: round(output, 6),
      blended_price_per_million: round(blended(input, output), 6),
      updated_at: at,
      observations: rows.length,
      sources: [...new Set(rows.map((r) => r.provenance.source))].sort(),
      offer: sameOffer(rows),
    });
  }
  return out;
}

/** The offer all rows name, or null when one names none or two differ (an average of several listings). */
function sameOffer(rows: readonly PriceObservation[]): PriceSummary['offer'] {
  const first = rows[0]?.offer ?? null;
  if (!first) return null;
  const same = rows.every(
    (r) => r.offer?.provider === first.provider && r.offer.provider_model_id === first.provider_model_id,
  );
  return same ? { provider: first.provider, provider_model_id: first.provider_model_id } : null;
}
