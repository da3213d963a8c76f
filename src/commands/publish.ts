import { open } from 'node:fs/promises';
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
        afterPlan: pauseHook(process.env.MODELPUB_TEST_PAUSE_AFTER_PLAN),
      });
  } finally {
    await target.close();
  }
  if (retries) console.log(`${retries} requests were retried (5xx, 429 or a network error)`);
}

/**
 * MODELPUB_TEST_PAUSE_AFTER_PLAN=FIFO, for tests: once planned, the lock held, the publish says so on stderr and waits
 * until a writer opens the FIFO and closes it, so that a test sets the order of two publishes without a clock.
 */
function pauseHook(fifo: string | undefined): (() => Promise<void>) | undefined {
  if (!fifo) return undefined;
  return async () => {
    console.error(`paused after planning: waiting on ${fifo}`);
    const h = await open(fifo, 'r');
    try {
      for await (const _ of h.createReadStream()) {
        /* until the writer closes */
      }
    } finally {
      await h.close().catch(() => {});
    }
  };
}
