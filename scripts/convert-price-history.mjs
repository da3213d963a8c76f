// The price-history step of scripts/convert-reference.mjs: price-history.json's two sources (see the reference
// README) as PriceHistoryRecords (src/schema/source.ts), one file per source under data/price-history/.
//   - models.dev rows are tied to their offer by source_path (offers.json's file of the offer);
//   - genai-prices rows by provider + catalog_slug to that provider's first-party offer (match
//     catalog_model_id_or_slug), or to the offer whose provider_model_id is genai_prices_id (offer_provider_model_id).
// Rows whose range is empty are left out (validate refuses an end that is not after its start); short-lived rows are
// kept with their flag, and the build leaves them out (src/pipeline/compute/history.ts).

/** A cost key of models.dev -> the price card's field; any other key goes to other_prices as written. */
const CARD_KEYS = {
  input: 'input_price_per_million',
  output: 'output_price_per_million',
  cache_read: 'cache_read_price_per_million',
  cache_write: 'cache_write_price_per_million',
  reasoning: 'reasoning_price_per_million',
  input_audio: 'input_audio_price_per_million',
  output_audio: 'output_audio_price_per_million',
};
/** The prices a tier or a mode restates. */
const TOKEN_KEYS = ['input', 'output', 'cache_read', 'cache_write'];
/** genai-prices' keys with a card field; any other (cache_write_1h_mtok, web_searches_kcount) goes to other_prices. */
const GENAI_KEYS = {
  input_mtok: 'input_price_per_million',
  output_mtok: 'output_price_per_million',
  cache_read_mtok: 'cache_read_price_per_million',
  cache_write_mtok: 'cache_write_price_per_million',
};

export const HISTORY_DIR = 'price-history';
/** The source ids of sources.yaml, and the file each one's rows go to. */
export const HISTORY_SOURCES = { models_dev_git: 'models-dev', genai_prices: 'genai-prices' };

function price(value, where) {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new Error(`${where}: ${JSON.stringify(value)} is not a price`);
  return value;
}

function tokenPrices(cost, where, skip = []) {
  const out = {};
  for (const [k, v] of Object.entries(cost)) {
    if (skip.includes(k)) continue;
    if (!TOKEN_KEYS.includes(k)) throw new Error(`${where}: unknown key ${JSON.stringify(k)}`);
    out[CARD_KEYS[k]] = price(v, `${where}.${k}`);
  }
  return out;
}

/** Card fields in the schema's order, so the lines are stable whatever order the source wrote its keys in. */
function ordered(card) {
  const out = {};
  for (const f of Object.values(CARD_KEYS)) if (f in card) out[f] = card[f];
  return out;
}

/** A models.dev cost (today's names) and modes as the card: fields, tiers, modes, other_prices. */
export function cardOfModelsDev(cost, modes, where) {
  const card = {};
  const other = {};
  let tiers = [];
  for (const [k, v] of Object.entries(cost ?? {})) {
    if (k === 'tiers') {
      tiers = v.map((t, i) => {
        const at = `${where} cost.tiers[${i}]`;
        if ((t.tier?.type ?? 'context') !== 'context' || !Number.isInteger(t.tier?.size))
          throw new Error(`${at}: not a context tier: ${JSON.stringify(t.tier)}`);
        return { above_context_tokens: t.tier.size, ...ordered(tokenPrices(t, at, ['tier'])) };
      });
      tiers.sort((a, b) => a.above_context_tokens - b.above_context_tokens);
    } else if (CARD_KEYS[k]) card[CARD_KEYS[k]] = price(v, `${where} cost.${k}`);
    else other[k] = price(v, `${where} cost.${k}`);
  }
  const modeCards = {};
  for (const name of Object.keys(modes ?? {}).sort()) {
    const extra = Object.keys(modes[name]).filter((k) => k !== 'cost');
    if (extra.length) throw new Error(`${where} modes.${name}: unexpected ${extra.join(', ')}`);
    modeCards[name] = ordered(tokenPrices(modes[name].cost ?? {}, `${where} modes.${name}.cost`));
  }
  return withParts(ordered(card), tiers, modeCards, other);
}

/**
 * genai-prices' prices as the card: a `{base, tiers: [{start, price}]}` value is the base price plus, for each entry,
 * the tier above `start` tokens. A key with no card field keeps its base price in other_prices; `tierLost` counts the
 * tiered prices of such keys, which the card has no place for.
 */
export function cardOfGenaiPrices(prices, where, tierLost) {
  const card = {};
  const other = {};
  const tiers = new Map(); // start -> tier
  for (const [k, v] of Object.entries(prices)) {
    const tiered = v !== null && typeof v === 'object';
    const base = price(tiered ? v.base : v, `${where} prices.${k}${tiered ? '.base' : ''}`);
    const field = GENAI_KEYS[k];
    if (field) card[field] = base;
    else other[k] = base;
    if (!tiered) continue;
    for (const [i, t] of (v.tiers ?? []).entries()) {
      const at = `${where} prices.${k}.tiers[${i}]`;
      if (!Number.isInteger(t.start) || t.start <= 0) throw new Error(`${at}: start is not a token count`);
      if (!field) {
        tierLost.push(`${at}`);
        continue;
      }
      if (!tiers.has(t.start)) tiers.set(t.start, { above_context_tokens: t.start });
      tiers.get(t.start)[field] = price(t.price, `${at}.price`);
    }
  }
  const tierList = [...tiers.values()]
    .sort((a, b) => a.above_context_tokens - b.above_context_tokens)
    .map((t) => ({ above_context_tokens: t.above_context_tokens, ...ordered(t) }));
  return withParts(ordered(card), tierList, {}, other);
}

function withParts(card, tiers, modes, other) {
  return {
    ...card,
    ...(tiers.length ? { tiers } : {}),
    ...(Object.keys(modes).length ? { modes } : {}),
    ...(Object.keys(other).length ? { other_prices: Object.fromEntries(Object.entries(other).sort()) } : {}),
  };
}

const flags = (r) => ({
  ...(r.first_seen ? { first_seen: true } : {}),
  ...(r.short_lived ? { short_lived: true } : {}),
  ...(r.likely_correction ? { likely_correction: true } : {}),
  ...(r.announced_future ? { announced_future: true } : {}),
  ...(r.removed_from_models_dev ? { removed: true } : {}),
});

const isEmptyRange = (r) => r.effective_from !== null && r.effective_to !== null && r.effective_to <= r.effective_from;

/**
 * price-history.json as records by source id. `offers`: offers.json's rows; `evidence`: the converter's hash of a
 * reference row. Returns the records (sorted: offer, then start), the counts and notes to print.
 */
export function priceHistory(history, offers, evidence) {
  const byPath = new Map(offers.map((o) => [o.source_path, o]));
  const out = { 'models-dev': [], 'genai-prices': [] };
  const counts = { emptyDropped: 0, emptyShortLived: 0, genaiTierLost: [] };
  const offerOf = (o) => ({ model: o.catalog_slug, provider: o.provider, provider_model_id: o.provider_model_id });

  for (const r of history.models_dev_git) {
    const offer = byPath.get(r.source_path);
    if (!offer) throw new Error(`price-history.json: ${r.source_path} is the file of no offer in offers.json`);
    if (offer.catalog_slug !== r.catalog_slug)
      throw new Error(`price-history.json: ${r.source_path} is ${offer.catalog_slug}'s offer, not ${r.catalog_slug}'s`);
    if (isEmptyRange(r)) {
      counts.emptyDropped++;
      if (r.short_lived) counts.emptyShortLived++;
      continue;
    }
    if (r.precision !== 'commit_date') throw new Error(`price-history.json: unexpected precision ${r.precision}`);
    out['models-dev'].push({
      ...offerOf(offer),
      effective_from: r.effective_from,
      effective_to: r.effective_to,
      ...cardOfModelsDev(r.cost, r.modes, `price-history.json ${r.source_path} ${r.effective_from}`),
      precision: 'commit_date',
      ...flags(r),
      provenance: { source: HISTORY_SOURCES.models_dev_git, evidence_sha256: evidence(r) },
    });
  }

  for (const r of history.genai_prices) {
    const where = `price-history.json genai_prices ${r.provider}:${r.genai_prices_id} ${r.effective_from}`;
    const candidates =
      r.match === 'catalog_model_id_or_slug'
        ? offers.filter((o) => o.provider === r.provider && o.catalog_slug === r.catalog_slug && o.first_party)
        : r.match === 'offer_provider_model_id'
          ? offers.filter((o) => o.provider === r.provider && o.provider_model_id === r.genai_prices_id)
          : null;
    if (candidates === null) throw new Error(`${where}: unknown match ${JSON.stringify(r.match)}`);
    // Two first-party offers of one model at one provider: the one whose id genai-prices names.
    const offer =
      candidates.length === 1 ? candidates[0] : candidates.find((o) => o.provider_model_id === r.genai_prices_id);
    if (!offer || offer.catalog_slug !== r.catalog_slug)
      throw new Error(`${where}: ${candidates.length} offers match (${r.match}); expected one of ${r.catalog_slug}`);
    if (isEmptyRange(r)) {
      counts.emptyDropped++;
      continue;
    }
    if (r.precision !== 'announced') throw new Error(`${where}: unexpected precision ${r.precision}`);
    out['genai-prices'].push({
      ...offerOf(offer),
      effective_from: r.effective_from,
      effective_to: r.effective_to,
      ...cardOfGenaiPrices(r.prices, where, counts.genaiTierLost),
      precision: 'announced',
      ...flags(r),
      provenance: { source: HISTORY_SOURCES.genai_prices, evidence_sha256: evidence(r) },
    });
  }
  const key = (r) => [r.model, r.provider, r.provider_model_id, r.effective_from ?? '', r.effective_to ?? '~'];
  for (const rows of Object.values(out))
    rows.sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
      return 0;
    });
  return { records: out, counts };
}
