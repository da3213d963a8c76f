// The whole pipeline: load -> validate -> compute -> render -> write (staging) -> publish (switch).
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { QUERY_LANES, RevisionId, SORTS, type ChangeList, type Include, type Manifest } from '../schema/api.js';
import { LOCALES, type Locale } from '../schema/source.js';
import { DEFAULT_PAGE_SIZE, INCLUDE_SUBSETS, detailFile, listFile } from '../routes.js';
import { compute, type Computed } from './compute/index.js';
import { loadTree } from './load.js';
import { createProgress, type Progress } from './progress.js';
import {
  checkOutDir,
  claimOutDir,
  clearStaleStaging,
  lockOutDir,
  pruneReleases,
  readPrevious,
  stagingDirFor,
  switchTo,
  type PublicationMeta,
} from './publish.js';
import {
  attributionOf,
  envelopeParts,
  listDataJson,
  renderVariant,
  sectionsJson,
  withSections,
  type ArtifactModel,
  type VariantParts,
} from './render.js';
import { validateTree, type SourceData } from './validate.js';
import { UsageError } from '../errors.js';
import { writeFileNamed } from '../write-file.js';
import {
  latestLastModified,
  secondAfter,
  writeBodies,
  type PendingBody,
  type PreviousRelease,
  type WriteStats,
} from './write.js';

export const TOOL_VERSION = '0.1.0';

export interface BuildOptions {
  dataDir: string;
  outDir: string;
  /** Publication revision id; default: derived from the data, the schema version and the tool version. */
  revision?: string;
  /** Publication time (ISO); default: the newest date in the data (never the clock). */
  publishedAt?: string;
  /** List page sizes to prebuild; 50 (the default page size) is always included. */
  pageSizes?: number[];
  progress?: Progress;
  /** The data of dataDir, already loaded and validated (npm start reads it to tell whether to build). */
  loaded?: SourceData;
  /** Test hook: called after staging is complete, before the switch. */
  beforeSwitch?: () => Promise<void>;
}

export interface BuildResult {
  revision: string;
  releaseDir: string;
  publishedAt: string;
  files: number;
  stats: WriteStats;
  changes: ChangeList;
  seconds: number;
}

/** Checked before --out is touched: a build refused for it leaves nothing behind, not even a new folder's marker. */
function notBeforeData(forced: string, newestInData: string): void {
  const t = new Date(forced).toISOString();
  const newest = new Date(newestInData).toISOString();
  if (t < newest)
    throw new UsageError(
      `--published-at ${t} is before the newest date in the data, ${newest}: a publication cannot predate what it publishes.`,
    );
}

/**
 * The Last-Modified of the bodies that change, and the publication time: --published-at for both, else from the
 * newest date in the data (no clock is read). Neither goes back behind the previous publication's time. A body that
 * changes or appears (a path may come back after a removal) must get a time in a later whole second than every
 * Last-Modified the previous publication shows, or If-Modified-Since would answer 304 for its new bytes (HTTP dates
 * have whole seconds): the default moves there even when the edit added no newer date; a forced time short of it is
 * refused by writeBodies, once a body does change. The publication time is the time its changed bodies got, so no
 * body is ever later than its publication: that is what lets the next build bound every time any path ever had,
 * removed paths included, by the previous publication alone.
 */
function publicationTimes(
  forced: string | undefined,
  newestInData: string,
  previous: PreviousRelease | null,
  revision: string,
): { changedAt: string; publishedAt: (newlyModified: number) => string } {
  if (forced !== undefined) {
    const t = new Date(forced).toISOString();
    if (previous && t < previous.publishedAt) {
      throw new UsageError(
        `--published-at ${t} is before the previous publication's time ${previous.publishedAt}: Last-Modified would go back. Give a later time, or leave --published-at out.`,
      );
    }
    return { changedAt: t, publishedAt: () => t };
  }
  const t = new Date(newestInData).toISOString();
  if (!previous) return { changedAt: t, publishedAt: () => t };
  const moved = secondAfter(t, latestLastModified(previous));
  const kept = t < previous.publishedAt ? previous.publishedAt : t;
  return {
    changedAt: moved,
    publishedAt: (newlyModified) => (newlyModified > 0 || previous.revision !== revision ? moved : kept),
  };
}

/** Why a forced --published-at cannot publish a changed body, and what to give instead. */
const tooEarly = (t: string, file: string, latest: string) =>
  `--published-at ${t} is not in a later second than ${latest}, the latest Last-Modified of the previous publication, and ${file} changed or is new (it may have been published before, and removed): ` +
  `its Last-Modified must be later than any it may have had, or If-Modified-Since would answer 304 for its new bytes. Give --published-at ${secondAfter(t, latest)} or later, or leave it out.`;

/** The revision a build of `data` publishes unless --revision names one: the same data, schema and tool, the same id. */
export const dataRevision = (data: SourceData): string =>
  'r' +
  createHash('sha256')
    .update(`${data.digest}\n${data.site.schema_version}\n${TOOL_VERSION}`)
    .digest('hex')
    .slice(0, 12);

export async function loadAndValidate(dataDir: string): Promise<SourceData> {
  return validateTree(await loadTree(dataDir));
}

export async function build(o: BuildOptions): Promise<BuildResult> {
  const t0 = performance.now();
  // The revision names the release folder and goes in a header: a bad one must not get as far as a path.
  const badRevision = o.revision === undefined ? undefined : RevisionId.safeParse(o.revision).error;
  if (badRevision)
    throw new UsageError(
      `--revision ${JSON.stringify(o.revision)} is not a revision id: ${badRevision.issues[0]!.message}.`,
    );
  await checkOutDir(o.outDir);
  const progress = o.progress ?? createProgress(null);
  progress.phase('load + validate');
  const data = o.loaded ?? (await loadAndValidate(o.dataDir));
  if (o.publishedAt !== undefined) notBeforeData(o.publishedAt, data.latestInstant);
  progress.phase('compute');
  const computed = compute(data);
  await claimOutDir(o.outDir);
  const unlock = await lockOutDir(o.outDir);
  let staging: string | null = null;
  try {
    await clearStaleStaging(o.outDir);
    const previous = await readPrevious(o.outDir);
    const schemaVersion = data.site.schema_version;
    const revision = o.revision ?? dataRevision(data);
    const times = publicationTimes(o.publishedAt, data.latestInstant, previous, revision);
    const pageSizes = [...new Set([DEFAULT_PAGE_SIZE, ...(o.pageSizes ?? [])])].sort((a, b) => a - b);
    const totals: Record<string, number> = {};
    for (const lane of QUERY_LANES)
      for (const disp of ['public', 'display']) totals[`${lane}.${disp}`] = computed.lanes[lane].models.length;

    staging = stagingDirFor(o.outDir, revision);
    await rm(staging, { recursive: true, force: true });
    const total = countBodies(computed, pageSizes);
    progress.phase('render + write', total);
    const { entries, stats } = await writeBodies(bodies(computed, pageSizes), {
      stagingDir: staging,
      revision,
      changedAt: times.changedAt,
      previous,
      tooEarly,
      onProgress: (n) => progress.tick(n),
    });
    const publishedAt = times.publishedAt(stats.newlyModified);
    progress.phase('manifest');
    const manifest: Manifest = { schemaVersion, publicationRevision: revision, publishedAt, files: entries };
    const manifestBytes = Buffer.from(JSON.stringify(manifest));
    const meta: PublicationMeta = {
      schemaVersion,
      publicationRevision: revision,
      publishedAt,
      pageSizes,
      totals,
      attribution: attributionOf(data.site),
      manifestSha256: createHash('sha256').update(manifestBytes).digest('hex'),
    };
    const now = new Map(entries.map((e) => [e.path, e.sha256]));
    const changes: ChangeList = {
      publicationRevision: revision,
      previousRevision: previous?.revision ?? null,
      added: entries.filter((e) => !previous?.entries.has(e.path)).map((e) => e.path),
      changed: entries
        .filter((e) => {
          const p = previous?.entries.get(e.path);
          return p && p.sha256 !== e.sha256;
        })
        .map((e) => e.path),
      removed: previous ? [...previous.entries.keys()].filter((p) => !now.has(p)).sort() : [],
    };
    await writeFileNamed(path.join(staging, 'manifest.json'), manifestBytes);
    await writeFileNamed(path.join(staging, 'changes.json'), JSON.stringify(changes));
    await writeFileNamed(path.join(staging, 'publication.json'), `${JSON.stringify(meta, null, 2)}\n`);
    await o.beforeSwitch?.();
    progress.phase('switch');
    const releaseDir = await switchTo(o.outDir, staging, revision);
    staging = null;
    await pruneReleases(o.outDir, [releaseDir, ...(previous ? [previous.dir] : [])]);
    progress.end();
    return {
      revision,
      releaseDir,
      publishedAt,
      files: entries.length,
      stats,
      changes,
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    if (staging) await rm(staging, { recursive: true, force: true }).catch(() => {});
    await unlock();
  }
}

function countBodies(c: Computed, pageSizes: number[]): number {
  let n = 0;
  for (const lane of QUERY_LANES) {
    const models = c.lanes[lane].models.length;
    const pages = pageSizes.reduce((s, size) => s + Math.max(1, Math.ceil(models / size)), 0);
    n +=
      2 *
      (models * LOCALES.length * INCLUDE_SUBSETS.length +
        LOCALES.length * INCLUDE_SUBSETS.length * SORTS.length * pages +
        1);
  }
  return n;
}

export const artifactFile = (lane: string, displayOnly: boolean) =>
  `artifacts/${lane}.${displayOnly ? 'display' : 'public'}.json`;

/** Every body of the publication, one variant (lane x display-only) at a time so memory stays bounded. */
function* bodies(c: Computed, pageSizes: number[]): Generator<PendingBody> {
  const schemaVersion = c.data.site.schema_version;
  const attribution = JSON.stringify(attributionOf(c.data.site));
  for (const lane of QUERY_LANES) {
    for (const displayOnly of [false, true]) {
      const parts = renderVariant(c, lane, displayOnly);
      const sections = sectionJsons(parts, 'sections');
      const itemSections = sectionJsons(parts, 'itemSections');
      for (const [slug, m] of Object.entries(parts.models)) {
        for (const locale of LOCALES) {
          const detail = JSON.stringify(m.detail[locale]);
          for (const include of INCLUDE_SUBSETS) {
            const { head, tail } = envelopeParts(
              schemaVersion,
              locale,
              attribution,
              withSections(detail, sections.get(slug)!, include),
            );
            yield { path: detailFile({ slug, locale, lane, displayOnly, include }), head, tail };
          }
        }
      }
      for (const locale of LOCALES) {
        const items = new Map(Object.entries(parts.models).map(([slug, m]) => [slug, JSON.stringify(m.item[locale])]));
        for (const include of INCLUDE_SUBSETS) {
          const withInc = new Map(
            [...items].map(([slug, j]) => [slug, withSections(j, itemSections.get(slug)!, include)]),
          );
          for (const sort of SORTS) {
            const ordered = parts.orders[sort].map((s) => withInc.get(s)!);
            for (const pageSize of pageSizes) {
              const pages = Math.max(1, Math.ceil(ordered.length / pageSize));
              for (let page = 1; page <= pages; page++) {
                const data = listDataJson(
                  ordered.slice((page - 1) * pageSize, page * pageSize),
                  page,
                  pageSize,
                  ordered.length,
                );
                const { head, tail } = envelopeParts(schemaVersion, locale, attribution, data);
                yield { path: listFile({ locale, lane, displayOnly, include, sort, page, pageSize }), head, tail };
              }
            }
          }
        }
      }
      yield artifactBody(parts, schemaVersion, attribution, pageSizes, lane, displayOnly);
    }
  }
}

export function sectionJsons(
  parts: VariantParts,
  which: 'sections' | 'itemSections',
): Map<string, Record<Include, string>> {
  return new Map(Object.entries(parts.models).map(([slug, m]) => [slug, sectionsJson(m[which])]));
}

/** The gateway's input for list answers that are not prebuilt (q, other page sizes): orders, items, sections, search text. */
// It holds the attribution too, though publication.json has it: a composed page's publicationRevision is the
// artifact's, so everything in the page must come from the artifact, or a change of attribution alone would give
// pages under the old revision with the new attribution (bytes that no build wrote).
// And the prebuilt page sizes (schema/json-schema.ts ListArtifact says why).
function artifactBody(
  parts: VariantParts,
  schemaVersion: string,
  attributionJson: string,
  pageSizes: number[],
  lane: string,
  displayOnly: boolean,
): PendingBody {
  return {
    path: artifactFile(lane, displayOnly),
    head: '{"kind":"modelpub.list-artifact","publicationRevision":',
    tail: `,"schemaVersion":${JSON.stringify(schemaVersion)},"attribution":${attributionJson},"prebuiltPageSizes":${JSON.stringify(pageSizes)},"orders":${JSON.stringify(parts.orders)},"models":${JSON.stringify(
      Object.fromEntries(
        Object.entries(parts.models).map(([slug, m]): [string, ArtifactModel] => [
          slug,
          { item: m.item, sections: m.itemSections, search: m.search },
        ]),
      ),
    )}}`,
  };
}

export type { Locale };
