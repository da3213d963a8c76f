// `modelpub diff`: what a build of --data would change for a reader of the publication at --against. Exit code as
// diff(1) and `git diff --exit-code`: 0 nothing would change, 1 something would; errors are 2 (src/cli.ts).
import { dataRevision, loadAndValidate } from '../pipeline/build.js';
import { UsageError } from '../errors.js';
import { readSemantics } from '../pipeline/changes.js';
import { compute } from '../pipeline/compute/index.js';
import { diffSnapshots, isEmptyDiff, renderDiff, summaryLine } from '../pipeline/diff.js';
import { contentOf, snapshotOf } from '../pipeline/snapshot.js';
import { openSource, type Release } from '../publication/source.js';
import { checkS3Options, type S3CommandOptions } from './s3-options.js';
import { redactUrl } from '../redact.js';

export interface DiffCommandOptions extends S3CommandOptions {
  data: string;
  against: string;
  json?: boolean;
}

/** Prints the diff; returns whether a build would publish something new (the exit code 1). */
export async function diffCommand(o: DiffCommandOptions): Promise<boolean> {
  checkS3Options(o, o.against, '--against');
  const source = await openSource(o.against, {
    endpoint: o.endpoint,
    region: o.region,
    forcePathStyle: o.forcePathStyle,
  });
  let release: Release | null;
  let snapshot: Awaited<ReturnType<typeof readSemantics>>['snapshot'];
  try {
    release = await source.live();
    if (!release) throw new UsageError(`--against ${o.against} holds no publication: ${source.nothingPublished}`);
    ({ snapshot } = await readSemantics(release));
  } finally {
    await source.close();
  }
  const live = { where: release.where, revision: release.meta.publicationRevision, snapshot };
  const data = await loadAndValidate(o.data);
  const wouldBe = snapshotOf(compute(data), dataRevision(data));
  const diff = diffSnapshots(contentOf(live.snapshot), wouldBe);
  // Data that differs only where no reader sees it (a private note, an order key such as updated_at) still makes a
  // new revision: a build would publish, so that is a change too, told as such.
  const newRevision = live.snapshot.dataRevision !== wouldBe.dataRevision;
  const changed = newRevision || !isEmptyDiff(diff);
  const summary =
    isEmptyDiff(diff) && newRevision
      ? `no changes a reader sees, but a new revision (${wouldBe.dataRevision}): the data differs in fields the API ` +
        'does not show, or orders by (updated_at, served_by)'
      : summaryLine(diff);
  if (o.json) {
    const against = { revision: live.revision, where: redactUrl(live.where) };
    console.log(JSON.stringify({ against, dataRevision: wouldBe.dataRevision, summary, ...diff }, null, 2));
  } else {
    process.stdout.write(renderDiff(diff, summary));
    console.error(`(compared with revision ${live.revision} at ${redactUrl(live.where)})`);
  }
  return changed;
}
