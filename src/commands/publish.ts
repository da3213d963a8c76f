import { UsageError } from '../errors.js';
import { publish, rollback } from '../publish/publish.js';
import { openTarget } from '../publication/targets/index.js';
import { checkS3Options, type S3CommandOptions } from './s3-options.js';

export interface PublishCommandOptions extends S3CommandOptions {
  from?: string;
  to?: string;
  dryRun?: boolean;
  concurrency: number;
  keep: number;
  rollback?: string;
  quiet?: boolean;
}

export async function publishCommand(o: PublishCommandOptions): Promise<void> {
  if (!o.to) throw new UsageError('--to is missing: say where to publish, s3://BUCKET/PREFIX or file:///PATH');
  if (o.rollback !== undefined && o.from !== undefined)
    throw new UsageError('give --rollback REVISION or --from DIR, not both: a rollback uploads nothing');
  checkS3Options(o, o.to, '--to');
  let retries = 0;
  const target = await openTarget(o.to, {
    endpoint: o.endpoint,
    region: o.region,
    forcePathStyle: o.forcePathStyle,
    concurrency: o.concurrency,
    onRetry: () => {
      retries++;
    },
  });
  try {
    if (o.rollback !== undefined) await rollback({ target, revision: o.rollback, dryRun: o.dryRun });
    else
      await publish({
        from: o.from ?? 'dist',
        target,
        keep: o.keep,
        concurrency: o.concurrency,
        dryRun: o.dryRun,
        progress: o.quiet ? null : process.stderr,
        retries: () => retries,
      });
  } finally {
    await target.close();
  }
  if (retries) console.log(`${retries} requests were retried (5xx, 429 or a network error)`);
}
