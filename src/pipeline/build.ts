// The whole pipeline, in order: load -> validate -> compute -> render + write (staging) -> publish (switch). Each stage
// lives in its own module; this one only orchestrates them around the output folder's lock.
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { UsageError } from '../errors.js';
import { attributionOf } from '../publication/assemble.js';
import type { ChangeList } from '../publication/files.js';
import { laneVariantKey } from '../publication/layout.js';
import { checkForcedTime, timePolicy } from '../publication/times.js';
import { BUILD_LEVELS, createCompressor } from '../publication/compress.js';
import { emptyWriteStats, writeBodies, writeReleaseFiles, type WriteStats } from '../publication/writer.js';
import type { SemanticDiff } from '../schema/api.js';
import { RevisionId } from '../schema/primitives.js';
import { DEFAULT_PAGE_SIZE } from '../schema/requests.js';
import { bodies, countBodies, LANE_VARIANTS } from './bodies.js';
import { semanticStep } from './changes.js';
import { PartsStore } from './parts-store.js';
import { openPrevious } from './previous.js';
import type { IndexedRelease } from '../publication/source.js';
import type { RemoteOptions } from '../publication/targets/index.js';
import { compute, type LeftOut } from './compute/index.js';
import { loadTree } from './load.js';
import { createProgress, type Progress } from './progress.js';
import {
  checkOutDir,
  claimOutDir,
  claimStaging,
  clearStaleStaging,
  forgetStaging,
  lockOutDir,
  pruneReleases,
  removeOldReleases,
  removeTree,
  switchTo,
} from '../publication/folder.js';
import { validateTree, type SourceData } from './validate.js';

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
  /** Write br and gzip representations (default true); a release without them is served as identity. */
  compression?: boolean;
  progress?: Progress;
  /** The data of dataDir, already loaded and validated (npm start reads it to tell whether to build). */
  loaded?: SourceData;
  /**
   * The root a publish wrote to (https://, http://, s3:// or file://): its live publication is the previous one,
   * instead of --out's live release (a fresh CI runner has none).
   */
  previousUrl?: string;
  /** For an s3:// previousUrl: --endpoint, --region, path style. */
  remoteOptions?: RemoteOptions;
  /** What the representations may hold in memory before they spill to a file (default 32 MB; tests give 0). */
  representationsMemoryBytes?: number;
  /** A body of pieces from this size on is made in chunks, never whole (default LARGE_BODY_BYTES; tests give less). */
  largeBodyBytes?: number;
  /** Test hook: called after staging is complete, before the switch. */
  beforeSwitch?: () => Promise<void>;
}

export interface BuildResult {
  revision: string;
  /** Set when --previous named a remote with nothing published yet: this build is a first publication. */
  nothingAtPrevious?: boolean;
  releaseDir: string;
  publishedAt: string;
  files: number;
  /** Whether the release has br and gzip representations. */
  compressed: boolean;
  stats: WriteStats;
  /** Models' parts (per lane variant) taken from the last build's store for their unchanged inputs, and rendered. */
  parts: { reused: number; rendered: number };
  changes: ChangeList;
  seconds: number;
  /** Valid data that entered no published number, and implausible values: the build command reports both. */
  leftOut: LeftOut;
  warnings: SourceData['warnings'];
  /** The semantic changes against the live release (pipeline/changes.ts); `unchanged`: nothing was published. */
  semantic: { summary: string; diff: SemanticDiff | null; unchanged: boolean };
}

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

/** The result of a build that would publish the live release again: nothing was written. */
function unchangedResult(
  live: IndexedRelease & { dir: string },
  startedAt: number,
  extra: Pick<BuildResult, 'leftOut' | 'warnings'>,
): BuildResult {
  const revision = live.meta.publicationRevision;
  return {
    revision,
    releaseDir: live.dir,
    publishedAt: live.meta.publishedAt,
    files: live.files.size,
    compressed: live.representations !== null,
    stats: emptyWriteStats(),
    parts: { reused: 0, rendered: 0 },
    changes: { publicationRevision: revision, previousRevision: revision, added: [], changed: [], removed: [] },
    seconds: (performance.now() - startedAt) / 1000,
    ...extra,
    semantic: { summary: 'no changes', diff: { models: [], catalog: [] }, unchanged: true },
  };
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
  // In a function of its own, so that no variable of this one holds the loaded data past compute.
  const computed = await (async () => {
    const loaded = o.loaded ?? (await loadAndValidate(o.dataDir));
    if (o.publishedAt !== undefined) checkForcedTime(o.publishedAt, loaded.latestInstant);
    progress.phase('compute');
    return compute(loaded); // which keeps no measurement: nothing after it reads them
  })();
  const data = computed.data;
  await claimOutDir(o.outDir);
  const unlock = await lockOutDir(o.outDir);
  let staging: string | null = null;
  let closePrevious: (() => Promise<void>) | null = null;
  let pruning: Promise<void> | null = null;
  let parts: PartsStore | null = null;
  try {
    // Its own phase: a rebuild's reading of the previous release and its snapshot diff is a share of its time.
    progress.phase('previous release + changes');
    await clearStaleStaging(o.outDir);
    const from = await openPrevious(o.outDir, o.previousUrl, o.remoteOptions);
    closePrevious = from.close;
    const previous = from.release;
    const schemaVersion = data.site.schema_version;
    const revision = o.revision ?? dataRevision(data);
    const times = timePolicy(
      o.publishedAt,
      data.latestInstant,
      previous && {
        revision: previous.meta.publicationRevision,
        publishedAt: previous.meta.publishedAt,
        entries: previous.files,
      },
      revision,
    );
    // The representations' levels; null with --no-compression.
    const levels = o.compression === false ? null : BUILD_LEVELS;
    const pageSizes = [...new Set([DEFAULT_PAGE_SIZE, ...(o.pageSizes ?? [])])].sort((a, b) => a - b);
    // What changed for a reader, against the live snapshot; the live release itself again publishes nothing.
    const semantic = await semanticStep(computed, previous, {
      revision,
      dataRevision: dataRevision(data),
      pageSizes,
      compression: levels,
      forcedPublishedAt: o.publishedAt,
      newRevisionAt: times.changedAt,
      scratchDir: o.outDir,
    });
    if (semantic.unchanged) {
      progress.end();
      return unchangedResult(semantic.unchanged, t0, { leftOut: computed.leftOut, warnings: data.warnings });
    }

    // The releases older than the live one go, beside the writing: the live one stays, whatever this build does.
    pruning = removeOldReleases(o.outDir, previous?.dir ? [previous.dir] : []);
    pruning.catch(() => {}); // handled: its error is thrown where it is awaited
    staging = await claimStaging(o.outDir, revision);
    progress.phase('render + write', countBodies(computed, pageSizes) + semantic.bodyCount);
    // Compression runs on a worker thread per core beside the rendering, below its priority: at catalog scale it is most
    // of the build's CPU (the 300-model synthetic catalog's main thread idled 21 s of 45 s waiting for one thread), and
    // on the default data the main thread is the critical path. The pool ends with the write, failed or not.
    const pool = levels && createCompressor({ threads: availableParallelism(), ...levels });
    parts = PartsStore.open(o.outDir, staging);
    const written = await writeBodies(semantic.withBodies(bodies(computed, pageSizes, parts)), {
      stagingDir: staging,
      revision,
      times,
      previous,
      onProgress: (n) => progress.tick(n),
      largeBodyBytes: o.largeBodyBytes,
      ...(pool && levels && { compressor: { pool, levels, memoryBytes: o.representationsMemoryBytes } }),
    }).finally(() => pool?.close());
    const { entries, stats } = written;
    const publishedAt = times.publishedAt(stats.newlyModified);
    progress.phase('manifest');
    const changes = entries.changeList(revision, previous?.meta.publicationRevision ?? null);
    await writeReleaseFiles(
      staging,
      {
        schemaVersion,
        publicationRevision: revision,
        publishedAt,
        files: entries,
        ...(written.representations &&
          levels && { representations: written.representations, compression: { ...levels } }),
      },
      {
        schemaVersion,
        publicationRevision: revision,
        publishedAt,
        pageSizes,
        totals: Object.fromEntries(LANE_VARIANTS.map((v) => [laneVariantKey(v), computed.lanes[v.lane].models.length])),
        attribution: attributionOf(data.site),
      },
      changes,
    );
    parts.finish(o.outDir);
    await o.beforeSwitch?.();
    progress.phase('switch');
    const releaseDir = await switchTo(o.outDir, staging, revision);
    staging = null;
    parts.commit();
    progress.phase('prune'); // what removeOldReleases has not finished, and the record
    await pruning;
    await pruneReleases(o.outDir, [releaseDir, ...(previous?.dir ? [previous.dir] : [])]);
    progress.end();
    return {
      revision,
      releaseDir,
      publishedAt,
      files: entries.length,
      compressed: pool !== null,
      stats,
      parts: { reused: parts.reused, rendered: parts.rendered },
      changes,
      seconds: (performance.now() - t0) / 1000,
      leftOut: computed.leftOut,
      warnings: data.warnings,
      semantic: { summary: semantic.summary, diff: semantic.diff, unchanged: false },
      ...(from.nothingPublished ? { nothingAtPrevious: true } : {}),
    };
  } finally {
    // Nothing writes to a failed build's staging folder any more: writeBodies waits for the bodies under way.
    if (staging) {
      try {
        removeTree(staging);
        await forgetStaging(o.outDir, staging);
      } catch {} // still in the record: the next build clears it (clearStaleStaging)
    }
    parts?.close();
    await closePrevious?.().catch(() => {});
    await pruning?.catch(() => {}); // a failed build's error is the one that matters; the next build prunes again
    await unlock();
  }
}
