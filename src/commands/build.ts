import { build } from '../pipeline/build.js';
import { createProgress } from '../pipeline/progress.js';
import type { SourceData } from '../pipeline/validate.js';
import { leftOutLine, printWarnings } from './report.js';
import { checkS3Options, type S3CommandOptions } from './s3-options.js';
import { redactUrl } from '../redact.js';

export interface BuildCommandOptions extends S3CommandOptions {
  /** The root a publish wrote to: its live publication is the one this build continues from. */
  previous?: string;
  data: string;
  out: string;
  revision?: string;
  publishedAt?: string;
  pageSizes?: number[];
  /** false with --no-compression. */
  compression?: boolean;
  quiet?: boolean;
  /** The data folder, already loaded and validated by the caller. */
  loaded?: SourceData;
}

export async function buildCommand(o: BuildCommandOptions): Promise<void> {
  checkS3Options(o, o.previous ?? o.out, '--previous');
  const r = await build({
    previousUrl: o.previous,
    remoteOptions: { endpoint: o.endpoint, region: o.region, forcePathStyle: o.forcePathStyle },
    dataDir: o.data,
    outDir: o.out,
    revision: o.revision,
    publishedAt: o.publishedAt,
    pageSizes: o.pageSizes,
    compression: o.compression !== false,
    loaded: o.loaded,
    progress: createProgress(o.quiet ? null : process.stderr),
  });
  if (r.nothingAtPrevious)
    console.log(
      `--previous ${redactUrl(o.previous ?? '')} has nothing published yet (no current.json): built as a first publication`,
    );
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
    `  ${r.files} files, ${r.stats.uniqueBodies} distinct bodies, ${mb(r.stats.bytesWritten)} MB written, ` +
      `${r.stats.linkedFromPrevious} kept from the previous publication`,
  );
  const { rendered, skipped, rewritten, twins } = r.stats;
  console.log(
    `  ${rendered - rewritten} bodies made, ${twins} linked to a body of the same inputs made before them, ` +
      `${skipped + rewritten} carried over unchanged (the same inputs as in the previous publication` +
      `${rewritten ? `; ${rewritten} of them written from their inputs, the previous one being remote` : ''})`,
  );
  console.log(
    `  ${r.parts.rendered} models' parts rendered (per lane variant), ${r.parts.reused} taken from the last build ` +
      '(the same inputs)',
  );
  if (r.compressed)
    console.log(
      `  br + gzip representations: ${r.stats.encodedNew} bodies compressed, ${r.stats.encodedReused} kept from the ` +
        `previous publication (${r.stats.packsLinked} of its packs linked)`,
    );
  else console.log('  no br + gzip representations (--no-compression): the gateway answers identity');
  if (r.stats.previousUnread)
    console.warn(
      `modelpub: warning: ${r.stats.previousUnread} representations of the previous publication could not be read ` +
        `and were compressed again (the release is complete); the first: ${r.stats.previousUnreadWhy}`,
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
