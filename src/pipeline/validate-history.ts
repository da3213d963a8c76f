// The rules of price-history/*.jsonl (validate.ts lists them): each row names an offer, its range is not empty, the
// rows of one offer and source do not overlap, and a start in the future is an announced one.
import { quoted, type SourceIssue } from '../errors.js';
import type { OfferRecord, PriceHistoryRecord } from '../schema/source.js';

interface Row {
  value: PriceHistoryRecord;
  file: string;
  line: number;
}
/** What these rules read of validate.ts's context. */
interface HistoryContext {
  priceHistory: Iterable<Row>;
  offers: Iterable<{ value: OfferRecord }>;
  /** Models whose files have problems already reported. */
  invalidSlugs: Set<string>;
  errors: SourceIssue[];
}

const offerKey = (r: { provider: string; provider_model_id: string }) => `${r.provider}\u0000${r.provider_model_id}`;
const offerName = (r: { provider: string; provider_model_id: string }) =>
  `${r.provider}/${quoted(r.provider_model_id).slice(1, -1)}`;

/** A dated price is the price of an offer of offers/: the same provider, provider_model_id and model. */
export function pricesOfKnownOffers(c: HistoryContext): void {
  const offers = new Map<string, OfferRecord>();
  for (const { value } of c.offers) offers.set(offerKey(value), value);
  for (const { value: r, file, line } of c.priceHistory) {
    const offer = offers.get(offerKey(r));
    if (!offer)
      c.errors.push({
        file,
        line,
        field: 'provider_model_id',
        message: `no offer ${offerName(r)} in offers/${r.provider}.jsonl: a dated price belongs to an offer`,
      });
    else if (offer.model !== r.model && !c.invalidSlugs.has(r.model))
      c.errors.push({
        file,
        line,
        field: 'model',
        message: `the offer ${offerName(r)} is of ${quoted(offer.model)}, not ${quoted(r.model)}`,
      });
  }
}

const isEmpty = (r: PriceHistoryRecord) =>
  r.effective_from !== null && r.effective_to !== null && r.effective_to <= r.effective_from;

/** A range ends after it starts: an empty or backward range is in force on no day (a typo?). */
export function priceRangesNotEmpty(c: HistoryContext): void {
  for (const { value: r, file, line } of c.priceHistory)
    if (isEmpty(r))
      c.errors.push({
        file,
        line,
        field: 'effective_to',
        message: `${r.effective_to} is not after effective_from ${r.effective_from}: the range holds no day (effective_to is exclusive)`,
      });
}

/** Two rows of one offer and source in force on the same day would give that day two prices from one source. */
export function noOverlappingPrices(c: HistoryContext): void {
  const groups = new Map<string, Row[]>();
  for (const row of c.priceHistory) {
    if (isEmpty(row.value)) continue; // reported by priceRangesNotEmpty
    const k = `${offerKey(row.value)}\u0000${row.value.provenance.source}`;
    const g = groups.get(k);
    if (g) g.push(row);
    else groups.set(k, [row]);
  }
  const start = (r: Row) => r.value.effective_from ?? '';
  for (const rows of groups.values()) {
    rows.sort((a, b) => (start(a) < start(b) ? -1 : start(a) > start(b) ? 1 : 0));
    // The row reaching furthest so far: a long one may overlap several after it.
    let reach: Row | undefined;
    for (const row of rows) {
      const end = reach?.value.effective_to;
      if (reach && (end === null || end! > start(row)))
        c.errors.push({
          file: row.file,
          line: row.line,
          field: 'effective_from',
          message:
            `overlaps ${reach.file}:${reach.line} (${reach.value.effective_from ?? 'no start'} to ${end ?? 'no end'}), ` +
            `a price of the same offer ${offerName(row.value)} from the same source (${row.value.provenance.source})`,
        });
      const to = row.value.effective_to;
      if (!reach || (end !== null && (to === null || to > end!))) reach = row;
    }
  }
}

/**
 * A start after tomorrow is a price nobody has paid yet: allowed only as an announcement (announced_future: true), not
 * by a typo in the year. The clock is read only to refuse, as for observations (validate.ts).
 */
export function noUnannouncedFuturePrices(c: HistoryContext): void {
  const horizon = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  for (const { value: r, file, line } of c.priceHistory)
    if (r.effective_from !== null && r.effective_from > horizon && !r.announced_future)
      c.errors.push({
        file,
        line,
        field: 'effective_from',
        message: `${r.effective_from} is after ${horizon}, tomorrow: a future start needs announced_future: true (a typo in the year?)`,
      });
}
