// The bodies of GET /api/v1/catalog, GET /api/v1/metrics and GET /api/v1/openapi.json, made from the same parts as
// the details and lists (render.ts), so a catalog entry is byte for byte the data of its detail with every include.
//   catalog: one body per locale x lane x display variant; data.models holds every model of the lane, by slug.
//   metrics: one body per locale (labels are not localized: they differ only in the envelope's locale); the counts
//            of every lane are in each, so a client needs one request whatever lane it shows.
//   openapi: one body, with real examples from the verified lane, its public variant, in English.
//   llms.txt: one text (render-llms.ts), its examples the verified lane's most popular models.
import { INCLUDES, type Include, QUERY_LANES } from '../schema/api.js';
import { openApiDocument, type OpenApiExamples } from '../schema/openapi.js';
import { LOCALES, type Locale } from '../schema/source.js';
import {
  envelopeBytes,
  envelopeParts,
  innerJson,
  joinedBytes,
  listDataJson,
  type Piece,
  type SizedPiece,
  withSections,
} from '../publication/assemble.js';
import { catalogFile, LLMS_FILE, metricsFile, OPENAPI_FILE } from '../publication/layout.js';
import type { PiecesFile } from '../publication/pieces-file.js';
import { llmsParts, TEXT_CONTENT_TYPE } from './render-llms.js';
import type { PendingBody } from '../publication/writer.js';
import type { Computed } from './compute/index.js';
import { digestOf, type ModelJson, sectionDigests } from './inputs.js';
import type { VariantRenderer } from './render.js';

/** How many bodies CatalogBodies yields in a build (for the progress count). */
export const CATALOG_BODIES = LOCALES.length * (QUERY_LANES.length * 2 + 1) + 2;

/** The revision the document's examples show: theirs is not known when the document is made (a body never holds
 * the revision of another). */
const EXAMPLE_REVISION = 'r000000000000';
const EXAMPLE_LIST_SIZE = 2;
const EXAMPLE_METRICS = 3;

/**
 * The pieces a lane variant's catalog bodies are made of (each model's detail core per locale, its include sections),
 * as UTF-8 in a file (PiecesFile; the build's is its parts store, where each model's parts are): as large as a catalog
 * body (150 MB at 2,000 models), they would otherwise stay in memory through every other body of the variant. A
 * catalog body reads them straight into its bytes.
 */
export class CatalogPieces {
  /** Per model: where each of its pieces (a core per locale, then the sections) starts in the file, and its bytes. */
  private readonly refs = new Map<string, Float64Array>();

  /** `file`: where the pieces are kept; a lane's two variants share one. */
  constructor(private readonly file: PiecesFile) {}

  /** Keeps a model's pieces that `other`, of the same file, holds: a model the display overrides do not reach. */
  alias(slug: string, other: CatalogPieces): void {
    if (other.file !== this.file) throw new Error('catalog pieces alias pieces of another file');
    this.refs.set(slug, other.refs.get(slug)!);
  }

  /** Keeps a model's pieces already in the file: where each starts and its bytes, in the order append writes them. */
  at(slug: string, refs: Float64Array): void {
    this.refs.set(slug, refs);
  }

  /**
   * Appends a model's pieces to `file`, its detail core per locale (its closing brace left out), then its sections;
   * returns where each starts and its bytes.
   */
  static append(file: PiecesFile, detail: Record<Locale, string>, sections: Record<Include, string>): Float64Array {
    // `,<benchmarks>,<capabilities>,<pricing>}`: what withSections appends to a core for every include.
    const texts = [...LOCALES.map((l) => detail[l].slice(0, -1)), withSections('{', sections, INCLUDES)];
    const refs = new Float64Array(2 * texts.length);
    let at = file.size;
    for (const [i, text] of texts.entries()) {
      const bytes = Buffer.byteLength(text);
      refs.set([at, bytes], 2 * i);
      at += bytes;
    }
    file.append(Buffer.from(texts.join('')));
    return refs;
  }

  /**
   * What append wrote, read back from `refs` (where each piece starts, and its bytes): the detail per locale and the
   * sections JSON, `lengths` being each section's bytes in INCLUDES' order.
   */
  static texts(
    file: PiecesFile,
    refs: Float64Array,
    lengths: readonly number[],
  ): Pick<ModelJson, 'detail' | 'sections'> {
    const text = (i: number) => file.read(refs[2 * i]!, refs[2 * i + 1]!, 'the catalog pieces').toString();
    // The sections piece: `,` before each section, `}` after the last.
    const all = text(LOCALES.length);
    const sections = {} as Record<Include, string>;
    let from = 1;
    for (const [i, include] of INCLUDES.entries()) {
      sections[include] = all.slice(from, from + lengths[i]!);
      from += lengths[i]! + 1;
    }
    const detail = Object.fromEntries(LOCALES.map((l, i) => [l, `${text(i)}}`])) as Record<Locale, string>;
    return { detail, sections };
  }

  private piece(slug: string, i: number): SizedPiece {
    const refs = this.refs.get(slug)!;
    return this.file.piece(refs[2 * i]!, refs[2 * i + 1]!, `the catalog pieces of ${slug}`);
  }

  /** A model's detail with every include, as withSections makes it: its core, then its sections. */
  detail(slug: string, locale: Locale): SizedPiece[] {
    return [this.piece(slug, LOCALES.indexOf(locale)), this.piece(slug, LOCALES.length)];
  }

  /** Pieces as text (the document's examples). */
  static text(pieces: SizedPiece[]): string {
    return joinedBytes(() => pieces).toString();
  }
}

export class CatalogBodies {
  private readonly examples: OpenApiExamples = {};
  /** The most popular models of the verified lane: llms.txt's examples. */
  private exampleSlugs: string[] = [];
  private exampleDeveloper: string | null = null;
  private readonly schemaVersion: string;

  constructor(
    private readonly c: Computed,
    private readonly attributionJson: string,
    /** The digest of each locale's envelope (bodies.ts): where a catalog body's inputs digest starts. */
    private readonly envelopes: Record<Locale, string>,
  ) {
    this.schemaVersion = c.data.site.schema_version;
  }

  private envelope(locale: Locale, dataJson: string) {
    return envelopeParts(this.schemaVersion, locale, this.attributionJson, dataJson);
  }

  /**
   * The catalog bodies of one lane and display variant, each made only when its digest changed; from the verified
   * public one, the document's examples.
   */
  *variant(
    r: VariantRenderer,
    models: ReadonlyMap<string, Pick<ModelJson, 'item' | 'digests'>>,
    pieces: CatalogPieces,
  ): Generator<PendingBody> {
    const slugs = [...models.keys()].sort();
    const { lane, displayOnly } = r;
    for (const locale of LOCALES) {
      const inputs = digestOf(
        this.envelopes[locale],
        slugs.length,
        ...slugs.map((s) => {
          const d = models.get(s)!.digests;
          return `${d.detail[locale]}:${sectionDigests(d.sections, INCLUDES)}`;
        }),
      );
      // A piece at a time: the details of every model are the largest body of a release.
      function* dataPieces(): Generator<Piece> {
        yield '{"models":[';
        for (const [i, slug] of slugs.entries()) {
          if (i) yield ',';
          yield* pieces.detail(slug, locale);
        }
        yield `],"total":${slugs.length}}`;
      }
      yield {
        path: catalogFile({ locale, lane, displayOnly }),
        inputs,
        render: () => envelopeBytes(this.schemaVersion, locale, this.attributionJson, dataPieces),
      };
      if (lane === 'verified' && !displayOnly && locale === 'en') this.keepExamples(r, models, pieces, slugs[0]);
    }
  }

  /** Real answers of this publication, as the document shows them (the revision aside: EXAMPLE_REVISION). */
  private keepExamples(
    r: VariantRenderer,
    models: ReadonlyMap<string, Pick<ModelJson, 'item'>>,
    pieces: CatalogPieces,
    firstSlug: string | undefined,
  ): void {
    const example = (dataJson: string) => {
      const { head, tail } = this.envelope('en', dataJson);
      return JSON.parse(head + JSON.stringify(EXAMPLE_REVISION) + tail) as unknown;
    };
    const detail = (slug: string) => CatalogPieces.text(pieces.detail(slug, 'en'));
    const order = r.orders.popular;
    this.exampleSlugs = order.slice(0, 2);
    this.exampleDeveloper = order[0] === undefined ? null : r.developerOf(order[0]);
    const items = order.slice(0, EXAMPLE_LIST_SIZE).map((s) => models.get(s)!.item.en);
    this.examples.list = example(listDataJson(items, 1, EXAMPLE_LIST_SIZE, order.length));
    const first = order[0];
    if (first === undefined) return;
    // The detail without its includes: the core, closed.
    this.examples.detail = example(`${CatalogPieces.text(pieces.detail(first, 'en').slice(0, 1))}}`);
    const firstDetail = firstSlug === undefined ? null : detail(firstSlug);
    this.examples.catalog = example(`{"models":[${firstDetail}],"total":${models.size}}`);
  }

  /** The metrics bodies and the OpenAPI document: after every variant (they need what each one left). */
  *finish(): Generator<PendingBody> {
    const metrics = this.metrics();
    for (const locale of LOCALES)
      yield { path: metricsFile({ locale }), ...this.envelope(locale, JSON.stringify({ metrics })) };
    const cut = { metrics: metrics.slice(0, EXAMPLE_METRICS) };
    const { head, tail } = this.envelope('en', JSON.stringify(cut));
    this.examples.metrics = JSON.parse(head + JSON.stringify(EXAMPLE_REVISION) + tail);
    const developers = [...new Set(this.c.lanes.all.models.map((m) => m.developer))].sort();
    const providers = [...new Set([...this.c.offers.values()].flatMap((os) => os.map((o) => o.provider)))].sort();
    const { openapi, ...rest } = openApiDocument({
      name: this.c.data.site.name,
      schemaVersion: this.schemaVersion,
      developers,
      providers,
      examples: this.examples,
    });
    // The revision that last changed the document, as every body names its own (root x- fields are extensions).
    yield {
      path: OPENAPI_FILE,
      head: `{"openapi":${JSON.stringify(openapi)},"x-publication-revision":`,
      tail: `,${innerJson(rest)}}`,
    };
    yield {
      path: LLMS_FILE,
      contentType: TEXT_CONTENT_TYPE,
      ...llmsParts({
        name: this.c.data.site.name,
        url: this.c.data.site.url,
        verified: this.c.lanes.verified.models.length,
        all: this.c.lanes.all.models.length,
        slugs: this.exampleSlugs,
        developer: this.exampleDeveloper,
      }),
    };
  }

  /** Every metric that ranks a model in some lane, in metrics.yaml's order, with its leaderboard length per lane. */
  private metrics() {
    const out = [];
    for (const m of this.c.data.metrics) {
      const count = (lane: (typeof QUERY_LANES)[number]) => this.c.lanes[lane].boards.get(m.key)?.rows.length ?? 0;
      const ranked_count = { verified: count('verified'), provisional: count('provisional'), all: count('all') };
      if (ranked_count.all === 0 && ranked_count.verified === 0 && ranked_count.provisional === 0) continue;
      out.push({
        metric_key: m.key,
        label: m.label,
        benchmark: m.benchmark,
        group: m.group,
        unit: m.unit,
        higher_is_better: m.higher_is_better,
        is_aggregate: m.aggregate,
        headline: m.headline,
        ranked_count,
      });
    }
    return out;
  }
}
