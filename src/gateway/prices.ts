// Dated prices on a day (?at=): the rows in force that day, picked from the build's prices artifact
// (artifacts/prices.json) and nothing else computed. A model's answer holds, per offer, at most one row per source;
// GET /api/v1/prices?at= holds each model's headline offer's row (one of a vendor's announced date before one of a
// repository's commit date). The answer's revision and Last-Modified are the artifact's.
import { createHash } from 'node:crypto';
import { PRICES_ARTIFACT } from '../publication/layout.js';
import { inForce, PricesArtifact, type OfferHistory, type PriceRow } from '../schema/history.js';
import type { PricesAllRequest, PricesRequest } from '../schema/requests.js';
import type { ComposedFile } from './compose.js';
import type { Publication } from './publication.js';
import { codedEtag, etagOf, httpDate } from './validators.js';

interface LoadedPrices {
  artifact: PricesArtifact & { publicationRevision: string };
  sha256: string;
  lastModified: string;
  entry: ComposedFile['entry'];
}

/** The rows of an offer in force on `day`: at most one per source (the ranges of one source do not overlap). */
export function rowsOn(history: readonly PriceRow[], day: string): PriceRow[] {
  const seen = new Set<string>();
  return history.filter((r) => inForce(r, day) && !seen.has(r.source) && seen.add(r.source));
}

const PRECISION_ORDER = { announced: 0, commit_date: 1, observed: 2 } as const;

/** The headline offer's one row of a day: the surest date first (announced, then commit_date, then observed). */
export function headlineRowOn(offer: OfferHistory, day: string): PriceRow | undefined {
  return rowsOn(offer.history, day).sort((a, b) => PRECISION_ORDER[a.precision] - PRECISION_ORDER[b.precision])[0];
}

const loaded = new WeakMap<Publication, Promise<LoadedPrices>>();

function load(pub: Publication): Promise<LoadedPrices> {
  let p = loaded.get(pub);
  if (!p) {
    p = (async () => {
      const entry = pub.entries.get(PRICES_ARTIFACT);
      if (!entry) throw new Error(`publication ${pub.revision} has no ${PRICES_ARTIFACT}`);
      const raw = JSON.parse((await pub.read(entry)).toString('utf8')) as Record<string, unknown>;
      const { kind, publicationRevision, ...rest } = raw;
      if (kind !== 'modelpub.prices-artifact' || typeof publicationRevision !== 'string')
        throw new Error(`publication ${pub.revision}: ${PRICES_ARTIFACT} is not a prices artifact`);
      const artifact = { ...PricesArtifact.parse(rest), publicationRevision };
      return { artifact, sha256: entry.sha256, lastModified: httpDate(entry.last_modified), entry };
    })();
    p.catch(() => loaded.delete(pub)); // a failed read is tried again by the next request
    loaded.set(pub, p);
  }
  return p;
}

/** Whether the publication was built with dated prices (an older one answers the price routes 404). */
export const hasPrices = (pub: Publication): boolean => pub.entries.get(PRICES_ARTIFACT) !== undefined;

/** The answer of a day, or null for a slug with no dated prices (404). */
export async function composePrices(
  pub: Publication,
  r: (PricesRequest & { at: string }) | PricesAllRequest,
): Promise<ComposedFile | null> {
  const p = await load(pub);
  const a = p.artifact;
  let data: unknown;
  if (r.kind === 'prices') {
    const m = a.models[r.slug];
    if (!m) return null;
    const offers = m.offers.flatMap((o) => {
      const history = rowsOn(o.history, r.at);
      return history.length ? [{ ...o, history }] : [];
    });
    data = { slug: r.slug, offers };
  } else {
    const models = Object.keys(a.models)
      .sort()
      .flatMap((slug) => {
        const m = a.models[slug]!;
        const offer = m.headline === null ? undefined : m.offers[m.headline];
        const row = offer && headlineRowOn(offer, r.at);
        return row ? [{ slug, provider: offer.provider, provider_model_id: offer.provider_model_id, row }] : [];
      });
    data = { at: r.at, models };
  }
  const body = Buffer.from(
    JSON.stringify({
      schemaVersion: a.schemaVersion,
      publicationRevision: a.publicationRevision,
      tier: 'free',
      attribution: a.attribution,
      data,
    }),
  );
  // A function of the artifact and the canonical request: their hash is a strong validator.
  const key = r.kind === 'prices' ? `prices\u0000${r.slug}\u0000${r.at}` : `prices-all\u0000${r.at}`;
  const validator = createHash('sha256').update(`${p.sha256}\n${key}`).digest('hex');
  const etag = etagOf(validator);
  return {
    entry: { ...p.entry, path: key, sha256: validator, bytes: body.length },
    etag,
    etagBr: codedEtag(etag, 'br'),
    etagGzip: codedEtag(etag, 'gzip'),
    lastModified: p.lastModified,
    encoded: null,
    body: [body],
  };
}
