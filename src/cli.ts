// The only place that turns errors into messages and exit codes.
import { Command, InvalidArgumentError } from 'commander';
import { ValidationError, UsageError } from './errors.js';
import { buildCommand } from './commands/build.js';
import { validateCommand } from './commands/validate.js';

const intList = (v: string): number[] => {
  const out = v.split(',').map((s) => Number(s));
  if (out.some((n) => !Number.isInteger(n) || n < 1 || n > 100)) throw new InvalidArgumentError('a comma-separated list of page sizes from 1 to 100');
  return out;
};
const isoTime = (v: string): string => {
  if (Number.isNaN(Date.parse(v))) throw new InvalidArgumentError('an ISO 8601 timestamp');
  return new Date(v).toISOString();
};

export function program(): Command {
  const p = new Command('modelpub').description('Publish a catalog of AI models as a static, read-only JSON API').showHelpAfterError();
  p.command('build')
    .description('validate data/, compute and write every /api/v1 response into a new publication, then switch to it')
    .option('--data <dir>', 'source data folder', 'data')
    .option('--out <dir>', 'publication folder (created; must be empty or a previous publication)', 'dist')
    .option('--revision <id>', 'publication revision id (default: derived from the data)')
    .option('--published-at <iso>', 'publication time (default: the newest date in the data)', isoTime)
    .option('--page-sizes <list>', 'extra list page sizes to prebuild, e.g. 7,100', intList)
    .option('--quiet', 'no progress output')
    .action((o) => buildCommand(o));
  p.command('validate')
    .description('check data/ and report every problem; publishes nothing')
    .option('--data <dir>', 'source data folder', 'data')
    .action((o) => validateCommand(o));
  return p;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (e) {
    if (e instanceof ValidationError || e instanceof UsageError) {
      console.error(`modelpub: ${e.message}`);
      process.exitCode = e instanceof ValidationError ? 1 : 2;
    } else {
      console.error(e);
      process.exitCode = 1;
    }
  }
}
