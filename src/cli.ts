// The only place that turns errors into messages and exit codes.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { AlreadyReported, CommandFailed, RemoteBusy, ValidationError, UsageError } from './errors.js';
import { redactUrls } from './redact.js';
import { buildCommand } from './commands/build.js';
import { diffCommand } from './commands/diff.js';
import { validateCommand } from './commands/validate.js';
import { DEFAULT_STORE, serveCommand } from './commands/serve.js';
import { devCommand } from './commands/dev.js';
import { keysCreate, keysList, keysRevoke } from './commands/keys.js';
import { publishCommand } from './commands/publish.js';
import { realMonthOrDay } from './schema/source.js';

const intList = (v: string): number[] => {
  const out = v.split(',').map((s) => Number(s));
  if (out.some((n) => !Number.isInteger(n) || n < 1 || n > 100))
    throw new InvalidArgumentError('a comma-separated list of page sizes from 1 to 100');
  return out;
};
const wholeNumber =
  (max: number, min = 0) =>
  (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`a whole number from ${min} to ${max}`);
    return n;
  };
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;
const isoTime = (v: string): string => {
  if (!ISO_8601.test(v) || !realMonthOrDay(v.slice(0, 10)) || Number.isNaN(Date.parse(v)))
    throw new InvalidArgumentError(
      'an ISO 8601 date or timestamp with a zone, e.g. 2026-11-23 or 2026-11-23T12:00:00Z',
    );
  return new Date(v).toISOString();
};

/** The root a publish wrote to: keys are appended to it, so a query or fragment cannot be kept. */
const remoteUrl = (v: string): string => {
  let u: URL | null = null;
  try {
    u = new URL(v);
  } catch {
    /* told below */
  }
  if (!u || !['http:', 'https:', 's3:', 'file:'].includes(u.protocol) || u.search || u.hash) {
    throw new InvalidArgumentError(
      'the root `modelpub publish --to` wrote to (the folder holding current.json), without ?query or ' +
        '#fragment: https://HOST/PREFIX/, http://HOST/PREFIX/, s3://BUCKET/PREFIX or file:///PATH',
    );
  }
  return v;
};
/** For reading or writing an s3:// remote. */
const s3Options = (c: Command): Command =>
  c
    .option('--endpoint <url>', 'API URL of an S3-compatible host (Cloudflare R2, MinIO, ...)')
    .option('--region <name>', 'AWS region (default: AWS_REGION or the AWS config files)')
    .option('--force-path-style', 'the bucket in the URL path, not the host name (default with --endpoint)')
    .option('--no-force-path-style', 'the bucket in the host name, even with --endpoint');

/**
 * Set by serve and dev: once they return (closed after a signal) or fail, the process ends here, whatever handles
 * are left (a cluster worker's channel to its primary, a store client still reconnecting).
 */
let servesUntilStopped = false;

export function program(): Command {
  const p = new Command('modelpub')
    .description('Publish a catalog of AI models as a static, read-only JSON API')
    .showHelpAfterError();
  s3Options(
    p
      .command('build')
      .description('validate data/, compute and write every /api/v1 response into a new publication, then switch to it')
      .option('--data <dir>', 'source data folder', 'data')
      .option('--out <dir>', 'publication folder (created; must be empty or a previous publication)', 'dist')
      .addOption(
        new Option(
          '--previous <url>',
          "continue from the live publication where `modelpub publish` wrote it (instead of --out's): " +
            'https://HOST/PREFIX/, s3://BUCKET/PREFIX or file:///PATH',
        ).argParser(remoteUrl),
      ),
  )
    .option('--revision <id>', 'publication revision id (default: derived from the data)')
    .option('--published-at <iso>', 'publication time (default: the newest date in the data)', isoTime)
    .option('--page-sizes <list>', 'extra list page sizes to prebuild, e.g. 7,100', intList)
    .option('--no-compression', 'write no br and gzip representations (the gateway then answers identity only)')
    .option('--quiet', 'no progress output')
    .action((o) => buildCommand(o));
  s3Options(
    p
      .command('diff')
      .description(
        'what a build of --data would change for readers of the publication at --against (exit 0: nothing, 1: changes, 2: error)',
      )
      .option('--data <dir>', 'source data folder', 'data')
      .requiredOption(
        '--against <dir|url>',
        "a build's --out (its live release), a release folder, or where `modelpub publish` wrote (https://, s3://, file://)",
      ),
  )
    .option('--json', 'print the changes as JSON')
    // diff(1)'s exit codes: 1 means "changes", so every error is 2, those of the option parser too (1 elsewhere).
    .exitOverride((e) => {
      throw e.exitCode === 0 ? e : new CommandFailed(e, 2);
    })
    .action(async (o) => {
      const changed = await diffCommand(o).catch((e: unknown) => {
        throw new CommandFailed(e, 2);
      });
      process.exitCode = changed ? 1 : 0;
    });
  p.command('validate')
    .description('check data/ and report every problem, and warnings about implausible values; publishes nothing')
    .option('--data <dir>', 'source data folder', 'data')
    .option('--strict', 'treat warnings (valid but implausible values) as problems: exit code 1, for CI')
    .action((o) => validateCommand(o));
  // dev serves its own build: --origin stays parseable there (devCommand refuses it, naming serve) but out of its help.
  const serving = (c: Command, remote = true) =>
    c
      .option(
        '--dir <dir>',
        `publication folder: a build --out, or one release folder (default: dist${remote ? ', unless --origin' : ''})`,
      )
      .addOption(
        new Option(
          '--origin <url>',
          'where `modelpub publish` wrote (instead of --dir): https://HOST/PREFIX/ (a static host, public ' +
            'bucket or CDN), s3://BUCKET/PREFIX or file:///PATH',
        )
          .argParser(remoteUrl)
          .hideHelp(!remote),
      )
      .option('--port <n>', 'port', wholeNumber(65535), 8787)
      .option('--host <addr>', 'address to listen on', '127.0.0.1')
      .option('--store <url>', 'keys and quota store: sqlite:PATH, redis://HOST:PORT or memory:', DEFAULT_STORE)
      .option('--quota <n>', 'requests per key per UTC day', wholeNumber(1e9, 1), 1000)
      .option('--cache-mb <n>', 'memory for cached bodies', wholeNumber(65536), 128)
      .option('--poll-ms <n>', 'how often to look for a new publication', wholeNumber(3_600_000, 100), 1000)
      .option(
        '--shutdown-grace <seconds>',
        'on SIGTERM/SIGINT, how long requests in progress may finish before their connections are closed',
        wholeNumber(30),
        10,
      )
      .addOption(
        new Option('--log <level>', 'info: a line per request').choices(['info', 'warn', 'silent']).default('info'),
      );
  s3Options(
    serving(
      p
        .command('serve')
        .description('answer /api/v1 requests from a publication: API keys, daily quotas, conditional requests'),
    ),
  )
    .option('--workers <n>', 'worker processes sharing the port', wholeNumber(64, 1), 1)
    .action((o) => {
      servesUntilStopped = true;
      return serveCommand(o);
    });
  serving(
    p
      .command('dev')
      .description(
        'build the default publication if needed, serve it in one process and print a development key (npm start)',
      ),
    false,
  )
    .option('--data <dir>', 'source data folder used when building', 'data')
    .action((o) => {
      servesUntilStopped = true;
      return devCommand(o);
    });
  s3Options(
    p
      .command('publish')
      .description(
        'upload a build to an object store or static host: objects the remote lacks, the manifest, then the pointer',
      )
      .option('--from <dir>', "a build's --out folder, or one of its release folders (default: dist)")
      .option('--to <url>', 's3://BUCKET/PREFIX or file:///PATH'),
  )
    .option('--dry-run', 'print what would be uploaded and deleted; change nothing')
    .option('--concurrency <n>', 'requests under way at once', wholeNumber(256, 1), 16)
    .option(
      '--keep <n>',
      'publications kept on the remote for a rollback, the live one included',
      wholeNumber(1000, 1),
      3,
    )
    .option('--rollback <revision>', 'move the pointer back to a kept publication of this revision; uploads nothing')
    .option('--quiet', 'no progress output')
    .addHelpText(
      'after',
      '\nCredentials for s3:// come from the standard AWS chain only (AWS_ACCESS_KEY_ID / ' +
        'AWS_SECRET_ACCESS_KEY,\nAWS_PROFILE and ~/.aws/), never from options. The remote layout: ' +
        'docs/publication.md.',
    )
    .action((o) => publishCommand(o));
  const keys = p.command('keys').description('manage API keys (stored as hashes only)');
  keys
    .command('create')
    .option('--store <url>', 'store URL', DEFAULT_STORE)
    .option('--label <text>', 'who the key is for', 'unnamed')
    .description('create a key; the key is printed once, alone on the last line')
    .action((o) => keysCreate(o));
  keys
    .command('list')
    .option('--store <url>', 'store URL', DEFAULT_STORE)
    .description('list keys (ids and labels, never the keys)')
    .action((o) => keysList(o));
  keys
    .command('revoke')
    .argument('<id-or-key>', 'the key id, as keys list shows it (k_...), or the key itself (mp_...)')
    .option('--store <url>', 'store URL', DEFAULT_STORE)
    .description('revoke a key; running gateways refuse it within 10 s')
    // A key pasted without its mp_ prefix may start with '-': commander's "unknown option" message would print it.
    .configureOutput({ outputError: (text, write) => write(text.replace(/'[^']*'/g, "'…'")) })
    .action((idOrKey, o) => keysRevoke({ ...o, idOrKey }));
  return p;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (caught) {
    // A command whose errors all exit with one code (diff) wraps them; the message is the wrapped error's.
    const e = caught instanceof CommandFailed ? caught.failure : caught;
    // commander has printed its own message (an option it rejected, or the help) before throwing.
    if (e instanceof CommanderError) process.exitCode = e.exitCode;
    else reportError(e);
    if (caught instanceof CommandFailed) process.exitCode = caught.exitCode;
  }
  if (servesUntilStopped) process.exit();
}

function reportError(e: unknown): void {
  if (e instanceof AlreadyReported) {
    process.exitCode = 1;
  } else if (e instanceof ValidationError || e instanceof UsageError || e instanceof RemoteBusy) {
    console.error(process.env.MODELPUB_DEBUG ? e : `modelpub: ${redactUrls(e.message)}`);
    process.exitCode = e instanceof ValidationError ? 1 : e instanceof RemoteBusy ? RemoteBusy.exitCode : 2;
  } else {
    // Errors of the machine or the store (a port in use, a file missing, Redis away) carry a message that names
    // what failed; a stack would only bury it. Programming errors keep theirs, and MODELPUB_DEBUG=1 shows all.
    const bug =
      !(e instanceof Error) ||
      e instanceof TypeError ||
      e instanceof ReferenceError ||
      e instanceof RangeError ||
      e instanceof SyntaxError;
    console.error(bug || process.env.MODELPUB_DEBUG ? e : `modelpub: ${redactUrls(e.message)}`);
    process.exitCode = 1;
  }
}
