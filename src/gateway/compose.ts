// List answers that are not prebuilt (a free-text q, a page size other than the prebuilt ones, a page past the end),
// composed from the build's list artifact with the build's own assembly functions: byte-identical to what the build
// would have written. Their publicationRevision and Last-Modified are the artifact's (the revision that last changed
// that lane's list data).
//
// Search (q): case- and accent-insensitive (NFKD, marks removed, lower case). A model matches when its name or slug,
// from one of its words on, starts with the query, both written without separators (only letters and digits: gpt4o,
// GPT-4o, "gpt 4o" and gpt.4o are one name to a person typing it, and the slug gpt-4o-mini holds it), or when every
// white-space-separated word of the query occurs in its name, slug or description in the requested locale. Results
// are ordered by relevance tier, then by the requested sort: (0) the query equals the name or slug, (1) the name or
// slug starts with it, (2) one of their later words does (all three without separators), or the name or slug holds
// the query as typed (inside a word: 千问 in 通义千问), (3) the rest (matched word by word).
//
// Filters (capabilities, developer, min_context_window, provider, ...) keep the models of that order that match all
// of them. Whether a developer or a provider exists is known only here: the known ones are those of lane `all` (every
// public model), so one with no model in the requested lane is an empty list, and a misspelled one a 400 naming the
// known ones.
import { envelopeParts, foldText, listDataJson, sectionsJson } from '../publication/assemble.js';
import type { ArtifactModel } from '../publication/files.js';
import { artifactFile, includeKey, type LaneVariant } from '../publication/layout.js';
import { parseArtifact } from '../publication/reader.js';
import type { Include, Sort } from '../schema/api.js';
import { filterKey, type InvalidParam, type ListFilter, type ListRequest } from '../schema/requests.js';
import type { Locale } from '../schema/source.js';
import { loadedArtifact, type LoadedArtifact } from './artifact.js';
import { ByteCache, Doorkeeper } from './caches.js';
import { compressAnswer } from './compress-answer.js';
import type { FileInfo, Publication } from './publication.js';
import { codedEtag, etagOf, httpDate } from './validators.js';

/** A composed list page: its envelope and the items' shared bytes, sent one after the other (entry.bytes long). */
export interface ComposedFile extends FileInfo {
  body: readonly Buffer[];
}

const CLOSE = Buffer.from('}');
const MARK = '\u0000'; // never in JSON text unescaped: marks where the items go

/** A model's list item as UTF-8, a comma in front: whole, and without its closing brace (sections are spliced in). */
interface ItemPieces {
  full: Buffer;
  open: Buffer;
}

/**
 * What search reads of a model: its name and slug as letters and digits only, whole and from each word on (each
 * after a line feed), and its search fields as the build wrote them (folded name, slug and text per locale).
 */
interface SearchEntry {
  name: string;
  slug: string;
  fromWords: string;
  search: ArtifactModel['search'];
}

/**
 * How q matches and orders, as a version: a change to it changes the answer to the same request from the same
 * artifact, so it enters the validator of every answer with q (else a client holding an older answer's ETag would be
 * told 304 for new bytes).
 */
const SEARCH_RULES = 'search 2: names and slugs also without separators, from a word on; as typed, inside a word';
/** When SEARCH_RULES last changed: answers with q are no older (If-Modified-Since alone must not keep an answer made by
 * older rules from an artifact built before them). */
const SEARCH_RULES_SINCE = '2026-11-24T00:00:00.000Z';
const SEARCH_RULES_SINCE_HTTP = httpDate(SEARCH_RULES_SINCE);

/** How filters match, as a version: it enters the validator of every filtered answer (as SEARCH_RULES does). */
const FILTER_RULES = 'filter 2: provider, status, exclude_snapshots';

const named = (values: readonly string[]) => values.map((v) => JSON.stringify(v)).join(', ');

const lettersAndDigits = (folded: string): string => folded.replace(/[^\p{L}\p{N}]+/gu, '');

/**
 * A name as letters and digits, from each of its words on: `nemotron nano 12b` gives nemotronnano12b, nano12b and
 * 12b, so a query is found where a word starts (nano12 finds it, o1 does not: an accident of the joined letters).
 */
const tailsFromWords = (folded: string): string[] =>
  [...folded.matchAll(/[\p{L}\p{N}]+/gu)].map((w) => lettersAndDigits(folded.slice(w.index)));

/**
 * A list artifact with what composing derives from it, each made on first use and kept with it: the items and
 * sections as UTF-8 pieces, the search index, the developers. Searching, filtering and assembling a page all happen
 * here, over the artifact alone.
 */
export class ArtifactView {
  private readonly items = new Map<Locale, Map<string, ItemPieces>>();
  private readonly sections = new Map<string, Record<Include, Buffer>>();
  private index: Map<string, SearchEntry> | null = null;
  private developerList: readonly string[] | null = null;
  private providerList: readonly string[] | null = null;

  constructor(readonly artifact: LoadedArtifact) {}

  /** The slugs `q` finds in `locale`, by relevance tier, then in the `sort` order (the rules are at the top). */
  search(q: string, locale: Locale, sort: Sort): string[] {
    const query = foldText(q);
    const words = query.split(/\s+/).filter(Boolean);
    const joined = lettersAndDigits(query);
    const atWord = `\n${joined}`;
    const index = this.searchIndex();
    const tiers: string[][] = [[], [], [], []];
    for (const slug of this.artifact.orders[sort]) {
      const { name, slug: compactSlug, fromWords, search } = index.get(slug)!;
      const named = joined !== '' && fromWords.includes(atWord);
      if (!named && !words.every((w) => search.text[locale].includes(w))) continue;
      const tier = named
        ? name === joined || compactSlug === joined
          ? 0
          : name.startsWith(joined) || compactSlug.startsWith(joined)
            ? 1
            : 2
        : // Inside a word, or a name written without spaces (通义千问 for 千问): as typed, still a name match.
          search.name.includes(query) || search.slug.includes(query)
          ? 2
          : 3;
      tiers[tier]!.push(slug);
    }
    return tiers.flat();
  }

  /**
   * The models of `order` that pass every filter. A model without a headline price never passes max_blended_price;
   * exclude_snapshots leaves out a dated snapshot one of whose aliases is in the artifact (the same lane and variant).
   */
  filter(order: readonly string[], f: ListFilter): string[] {
    const developers = new Set(f.developer);
    const providers = new Set(f.provider);
    const statuses = new Set<string>(f.status);
    const models = this.artifact.models;
    return order.filter((slug) => {
      const { item, sections, facets } = models[slug]!;
      const base = item.en;
      const caps = sections.capabilities.capabilities;
      const keys: readonly string[] = caps.keys; // the filter's keys are checked strings (requests.ts), not the enum
      const blended = sections.pricing.pricing?.blended_price_per_million ?? null;
      return (
        (developers.size === 0 || developers.has(base.developer)) &&
        (f.min_context_window === null || base.context_window_tokens >= f.min_context_window) &&
        (f.min_output_tokens === null || base.max_output_tokens >= f.min_output_tokens) &&
        (f.max_blended_price === null || (blended !== null && blended <= f.max_blended_price)) &&
        (f.open_weights === null || caps.open_weights === f.open_weights) &&
        f.capabilities.every((k) => keys.includes(k)) &&
        (providers.size === 0 || (facets?.providers.some((p) => providers.has(p)) ?? false)) &&
        (statuses.size === 0 || (facets !== undefined && statuses.has(facets.status))) &&
        (!f.exclude_snapshots || !facets?.aliases.some((alias) => models[alias] !== undefined))
      );
    });
  }

  /** The developers of the artifact's models, sorted. */
  developers(): readonly string[] {
    this.developerList ??= [...new Set(Object.values(this.artifact.models).map((m) => m.item.en.developer))].sort();
    return this.developerList;
  }

  /** The providers of the artifact's models' offers, sorted. */
  providers(): readonly string[] {
    this.providerList ??= [
      ...new Set(Object.values(this.artifact.models).flatMap((m) => m.facets?.providers ?? [])),
    ].sort();
    return this.providerList;
  }

  /**
   * The page's body as pieces: the envelope, assembled by the build's own functions (envelopeParts, listDataJson)
   * around a marker and split there, with the items' shared pieces in between. The same bytes the build writes, with
   * nothing copied here: composed pages are mostly made once and sent once, and allocating a whole body for each kept
   * V8's collector busy with external memory (several mark-compacts a second under the composed mix); the response
   * joins the pieces into a reused send buffer instead (SendBuffers). The envelope gets a buffer of its own (not a
   * slice of Node's shared pool, which a cached page would keep alive whole).
   */
  page(r: ListRequest, slugs: string[], total: number): Buffer[] {
    const a = this.artifact;
    const { head, tail } = envelopeParts(
      a.schemaVersion,
      r.locale,
      a.attributionJson,
      listDataJson(slugs.length ? [MARK] : [], r.page, r.pageSize, total),
    );
    const text = head + JSON.stringify(a.publicationRevision) + tail;
    const at = slugs.length ? text.indexOf(MARK) : text.length;
    const before = text.slice(0, at);
    const after = text.slice(at + MARK.length);
    const envelope = Buffer.allocUnsafeSlow(Buffer.byteLength(before) + Buffer.byteLength(after));
    const split = envelope.write(before);
    envelope.write(after, split);
    if (!slugs.length) return [envelope];
    const items = this.itemPieces(r.locale);
    const out: Buffer[] = [envelope.subarray(0, split)];
    for (const slug of slugs) {
      const item = items.get(slug)!;
      if (!r.include.length) out.push(item.full);
      else {
        out.push(item.open);
        const sections = this.sectionPieces(slug);
        for (const inc of r.include) out.push(sections[inc]);
        out.push(CLOSE);
      }
    }
    out[1] = out[1]!.subarray(1); // the first item without its comma
    out.push(envelope.subarray(split));
    return out;
  }

  /**
   * Each model's list item in pieces, encoded once per locale and shared by every page that lists it: `full` is the
   * item without sections, a comma in front; `open` the same without its closing brace, for items that get sections;
   * each section a comma in front. So an item for any include set is `full`, or `open` + sections + `}` (withSections'
   * splice, in bytes). Memory grows with the catalog times the three locales, not times every locale and include set
   * (the latter is over a hundred MB for the default publication's six lane variants).
   */
  private itemPieces(locale: Locale): Map<string, ItemPieces> {
    let m = this.items.get(locale);
    if (!m) {
      m = new Map();
      for (const [slug, model] of Object.entries(this.artifact.models)) {
        const full = Buffer.from(`,${JSON.stringify(model.item[locale])}`);
        m.set(slug, { full, open: full.subarray(0, -1) });
      }
      this.items.set(locale, m);
    }
    return m;
  }

  private sectionPieces(slug: string): Record<Include, Buffer> {
    let s = this.sections.get(slug);
    if (!s) {
      const json = sectionsJson(this.artifact.models[slug]!.sections);
      s = {
        benchmarks: Buffer.from(`,${json.benchmarks}`),
        capabilities: Buffer.from(`,${json.capabilities}`),
        pricing: Buffer.from(`,${json.pricing}`),
      };
      this.sections.set(slug, s);
    }
    return s;
  }

  private searchIndex(): Map<string, SearchEntry> {
    if (this.index === null) {
      this.index = new Map();
      for (const [slug, { search }] of Object.entries(this.artifact.models)) {
        // One string, each tail after a line feed (never in a tail): one includes() per model finds a tail that
        // starts with the query.
        const fromWords = [...tailsFromWords(search.name), ...tailsFromWords(search.slug)]
          .map((t) => `\n${t}`)
          .join('');
        this.index.set(slug, {
          name: lettersAndDigits(search.name),
          slug: lettersAndDigits(search.slug),
          fromWords,
          search,
        });
      }
    }
    return this.index;
  }
}

const COMPOSED_CACHE_BYTES = 16 << 20;
const SEARCH_CACHE_BYTES = 4 << 20;
/**
 * What a composed page holds on its own: its chunk list and its envelope, one buffer of its own that the first and
 * last chunks view (the items are shared with every other page and with the artifact).
 */
const composedCost = (f: ComposedFile) => 8 * f.body.length + f.body[0]!.buffer.byteLength + 64;

const composedKey = (r: ListRequest) =>
  `${r.locale}.${r.lane}.${r.displayOnly}.${includeKey(r.include)}.${r.sort}.${r.pageSize}.${r.page}.${r.q ?? ''}` +
  // After q, which cannot hold control characters: no two requests share a key. Unfiltered keys stay as they were.
  (r.filter ? `\u0001${filterKey(r.filter)}` : '');

/**
 * Composes the list answers of one publication, and owns what composing keeps, all dropped with the publication:
 * its list artifacts (each read and parsed once), composed answers and their br and gzip forms (from their second
 * request on, see Doorkeeper), and search results (a query's pages and include sets share one).
 */
export class Composer {
  private readonly views = new Map<string, Promise<ArtifactView>>();
  private readonly composed = new ByteCache<ComposedFile>(
    COMPOSED_CACHE_BYTES,
    (f, key) => composedCost(f) + 2 * key.length + 512,
  );
  private readonly composedSeen = new Doorkeeper();
  private readonly encodedAnswers = new ByteCache<Buffer>(
    COMPOSED_CACHE_BYTES,
    (b, key) => b.length + 2 * key.length + 128,
  );
  private readonly encodedSeen = new Doorkeeper(16);
  private readonly searches = new ByteCache<string[]>(
    SEARCH_CACHE_BYTES,
    (order, key) => 200 + 2 * key.length + 8 * order.length,
  );

  constructor(private readonly pub: Publication) {}

  /** A composed answer made earlier and still in memory: lets the request path stay synchronous. */
  cached(r: ListRequest): ComposedFile | undefined {
    return this.composed.get(composedKey(r));
  }

  /**
   * Composes a list answer, kept from its second request on (the caller asks `cached` first). A filter naming a
   * developer the publication does not have gives `{ invalid }`: a 400, which only the publication can tell.
   */
  async compose(r: ListRequest): Promise<ComposedFile | { invalid: InvalidParam[] }> {
    const cacheKey = composedKey(r);
    const invalid = await this.unknownNames(r);
    if (invalid) return { invalid };
    const view = await this.view(r);
    const order = this.order(view, r);
    const slugs = order.slice((r.page - 1) * r.pageSize, r.page * r.pageSize);
    const body = view.page(r, slugs, order.length);
    let bytes = 0;
    for (const c of body) bytes += c.length;
    // The body is a function of the artifact, the attribution and the canonical request: a hash of those is a strong
    // validator (same inputs, same bytes) without hashing the body itself. The first two are hashed once per artifact.
    const a = view.artifact;
    const rules = `${r.q === null ? '' : `${SEARCH_RULES}\n`}${r.filter === null ? '' : `${FILTER_RULES}\n`}`;
    const validator = a.validatorPrefix.copy().update(`${rules}${cacheKey}`).digest('hex');
    const etag = etagOf(validator);
    // An artifact older than the rules: its answers with q take the rules' date, which the next such artifact's
    // answers share, so only their ETag can say they did not change.
    const datedByRules = r.q !== null && a.entry.last_modified < SEARCH_RULES_SINCE;
    const lastModified = datedByRules ? SEARCH_RULES_SINCE_HTTP : a.lastModified;
    const served: ComposedFile = {
      ...(datedByRules && { lastModifiedIsFloor: true as const }),
      entry: { ...a.entry, path: cacheKey, sha256: validator, bytes },
      etag,
      etagBr: codedEtag(etag, 'br'),
      etagGzip: codedEtag(etag, 'gzip'),
      lastModified,
      encoded: null,
      body,
    };
    if (this.composedSeen.offer(cacheKey)) this.composed.set(cacheKey, served);
    return served;
  }

  /** A composed answer in br or gzip (compressAnswer's fast levels), kept from its second request on. */
  encoded(f: ComposedFile, coding: 'br' | 'gzip'): Buffer {
    const key = `${coding}\u0002${f.entry.path}`;
    const cached = this.encodedAnswers.get(key);
    if (cached !== undefined) return cached;
    const bytes = compressAnswer(
      f.body.length === 1 ? f.body[0]! : Buffer.concat(f.body as Buffer[], f.entry.bytes),
      coding,
    );
    if (this.encodedSeen.offer(key)) this.encodedAnswers.set(key, bytes);
    return bytes;
  }

  /** The list artifact of a lane and display variant, loaded once per publication. */
  artifact(variant: LaneVariant): Promise<LoadedArtifact> {
    return this.view(variant).then((v) => v.artifact);
  }

  /** The request's whole order: the sort's, or what q finds in it and the filters keep (one search per query). */
  private order(view: ArtifactView, r: ListRequest): readonly string[] {
    if (r.q === null && r.filter === null) return view.artifact.orders[r.sort];
    const key = `${r.lane}.${r.displayOnly}.${r.locale}.${r.sort}.${r.q ?? ''}${r.filter ? `\u0001${filterKey(r.filter)}` : ''}`;
    let order = this.searches.get(key);
    if (order === undefined) {
      order = r.q === null ? view.artifact.orders[r.sort] : view.search(r.q, r.locale, r.sort);
      if (r.filter !== null) order = view.filter(order, r.filter);
      this.searches.set(key, order);
    }
    return order;
  }

  /**
   * The filter's developers and providers that no public model has, as the 400 names them; null when all are known.
   * The known ones are those of lane `all` (every public model): one with no model in the requested lane is an empty
   * list.
   */
  private async unknownNames(r: ListRequest): Promise<InvalidParam[] | null> {
    if (!r.filter?.developer.length && !r.filter?.provider.length) return null;
    const all = await this.view({ lane: 'all', displayOnly: r.displayOnly });
    const invalid: InvalidParam[] = [];
    const developers = all.developers();
    const unknown = r.filter.developer.filter((d) => !developers.includes(d));
    if (unknown.length)
      invalid.push({
        name: 'developer',
        reason:
          `${named(unknown)} ${unknown.length > 1 ? 'are not developers' : 'is not a developer'} in this publication ` +
          `(names match exactly, case included); one of ${developers.join(', ')}`,
      });
    const providers = all.providers();
    const unknownProviders = r.filter.provider.filter((p) => !providers.includes(p));
    if (unknownProviders.length)
      invalid.push({
        name: 'provider',
        reason:
          `${named(unknownProviders)} ${unknownProviders.length > 1 ? 'are not providers' : 'is not a provider'} ` +
          `of any offer in this publication; one of ${providers.join(', ')}`,
      });
    return invalid.length ? invalid : null;
  }

  private view(variant: LaneVariant): Promise<ArtifactView> {
    const path = artifactFile(variant);
    let v = this.views.get(path);
    if (!v) {
      v = this.loadView(path);
      v.catch(() => this.views.delete(path)); // a failed read is tried again by the next request
      this.views.set(path, v);
    }
    return v;
  }

  private async loadView(path: string): Promise<ArtifactView> {
    const pub = this.pub;
    const entry = pub.entries.get(path);
    if (!entry) throw new Error(`publication ${pub.revision} has no ${path}`);
    const raw = parseArtifact(await pub.read(entry), `publication ${pub.revision}: ${path}`);
    return new ArtifactView(loadedArtifact(raw, entry, pub.meta.attribution));
  }
}

const composers = new WeakMap<Publication, Composer>();
/** The composer of a publication: made on its first composed answer, dropped with it. */
export function composerOf(pub: Publication): Composer {
  let c = composers.get(pub);
  if (c === undefined) composers.set(pub, (c = new Composer(pub)));
  return c;
}
