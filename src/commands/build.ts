import { build } from '../pipeline/build.js';
import { createProgress } from '../pipeline/progress.js';
import type { SourceData } from '../pipeline/validate.js';
import { leftOutLine, printWarnings } from './report.js';

export interface BuildCommandOptions {
  data: string;
  out: string;
  revision?: string;
  publishedAt?: string;
  pageSizes?: number[];
  quiet?: boolean;
  /** The data folder, already loaded and validated by the caller. */
  loaded?: SourceData;
}

export async function buildCommand(o: BuildCommandOptions): Promise<void> {
  const r = await build({
    dataDir: o.data,
    outDir: o.out,
    revision: o.revision,
    publishedAt: o.publishedAt,
    pageSizes: o.pageSizes,
    loaded: o.loaded,
    progress: createProgress(o.quiet ? null : process.stderr),
  });
  console.log(r.semantic.summary);
  if (r.semantic.unchanged) {
    console.log(
      `nothing to publish: the data is that of the live revision ${r.revision} (${r.releaseDir}), which stays current`,
    );
    return;
  }
  const mb = (n: number) => (n / 1e6).toFixed(1);
  console.log(`published revision ${r.revision} (${r.publishedAt}) at ${r.releaseDir}`);
  console.log(
    `  ${r.files} files, ${r.stats.uniqueBodies} distinct bodies, ${mb(r.stats.bytesWritten)} MB written, ${r.stats.linkedFromPrevious} kept from the previous publication`,
  );
  console.log(
    `  br + gzip representations: ${r.stats.encodedNew} bodies compressed, ${r.stats.encodedReused} kept from the previous publication`,
  );
  console.log(
    `  changes: ${r.changes.added.length} added, ${r.changes.changed.length} changed, ${r.changes.removed.length} removed (changes.json)`,
  );
  const left = leftOutLine(r.leftOut);
  if (left) console.log(left);
  if (r.warnings.length) {
    console.log(`  ${r.warnings.length} warnings (on stderr; modelpub validate --strict refuses them)`);
    printWarnings(r.warnings);
  }
  console.log(`  ${r.seconds.toFixed(1)} s`);
}
