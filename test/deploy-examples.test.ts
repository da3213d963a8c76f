// docs/examples: the systemd unit and the container file run `modelpub serve` as a non-root user with the store and
// the publication where the docs say, with options serve accepts; scripts/container-image.sh builds the image where a
// container tool answers (and says it skipped otherwise); the CI workflow validates --strict and keeps the AWS
// secrets away from `npm ci`.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureCompiled, ROOT, runCli } from './helpers/cli.js';

const run = promisify(execFile);
const example = (name: string) => readFile(path.join(ROOT, 'docs/examples', name), 'utf8');

/** Every --option of a command line, and whether `modelpub serve --help` lists it. */
async function unknownServeOptions(args: string[]): Promise<string[]> {
  const help = (await runCli(['serve', '--help'])).stdout;
  return args.filter((a) => a.startsWith('--') && !help.includes(a));
}

beforeAll(() => ensureCompiled(), 300_000);

describe('deployment examples', () => {
  it('the systemd unit: a non-root user, restarted always, a stop timeout past the grace period, options serve takes', async () => {
    const unit = await example('modelpub.service');
    const value = (k: string) => new RegExp(`^${k}=(.*)$`, 'm').exec(unit)?.[1];
    expect(value('User')).toBe('modelpub');
    expect(value('Restart')).toBe('always');
    expect(Number(value('TimeoutStopSec'))).toBeGreaterThanOrEqual(10 + 15);
    expect(value('StateDirectory')).toBe('modelpub');
    const exec = value('ExecStart')!.split(/\s+/);
    expect(exec.slice(exec.indexOf('serve'))).toEqual(
      expect.arrayContaining(['--store', 'sqlite:/var/lib/modelpub/gateway.db', '--dir', '/srv/modelpub/dist']),
    );
    expect(await unknownServeOptions(exec.slice(exec.indexOf('serve') + 1))).toEqual([]);
  });

  it('the container file: runs as `node`, the store and the publication are volumes, the command is one serve takes', async () => {
    const file = await example('Containerfile');
    const last = file.slice(file.lastIndexOf('\nFROM '));
    expect(/^USER (\S+)$/m.exec(last)?.[1]).toBe('node');
    expect(JSON.parse(/^VOLUME (.*)$/m.exec(last)![1]!)).toEqual(['/var/lib/modelpub', '/srv/modelpub']);
    const cmd = JSON.parse(/^CMD (.*)$/m.exec(last)![1]!) as string[];
    expect(cmd[0]).toBe('serve');
    expect(cmd[cmd.indexOf('--store') + 1]).toBe('sqlite:/var/lib/modelpub/gateway.db');
    expect(cmd[cmd.indexOf('--dir') + 1]!.startsWith('/srv/modelpub/')).toBe(true);
    expect(await unknownServeOptions(cmd.slice(1))).toEqual([]);
    expect(last).toMatch(/^HEALTHCHECK .*\/healthz/m);
  });

  it('scripts/container-image.sh builds and checks the image where podman or docker answers, and says it skipped otherwise', async () => {
    const { stdout } = await run(path.join(ROOT, 'scripts/container-image.sh'), ['modelpub:test'], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    });
    expect(stdout).toMatch(
      /^container-image: (built modelpub:test with (podman|docker) \(runs as uid [1-9]\d*\)|skipped, no working podman or docker here)$/m,
    );
  }, 900_000);

  it('the CI workflow validates --strict before building, and only the steps that reach the bucket see the AWS keys', async () => {
    const wf = parse(await example('github-actions-publish.yml')) as {
      env: Record<string, string>;
      jobs: Record<string, { env?: Record<string, string>; steps: { run?: string; env?: Record<string, string> }[] }>;
    };
    const secret = (env: Record<string, string> | undefined) =>
      Object.values(env ?? {}).some((v) => /secrets\.AWS_/.test(v));
    expect(secret(wf.env)).toBe(false);
    for (const job of Object.values(wf.jobs)) {
      expect(secret(job.env)).toBe(false);
      for (const step of job.steps) {
        if (step.run === undefined) continue;
        const reaches = /--previous|publish /.test(step.run);
        expect(secret(step.env), step.run).toBe(reaches);
        expect(step.run).not.toMatch(/\bnpx\b/);
      }
    }
    const steps = wf.jobs.publish!.steps.map((s) => s.run ?? '');
    const validate = steps.findIndex((r) => /modelpub\.js validate .*--strict/.test(r));
    expect(validate).toBeGreaterThan(steps.indexOf('npm ci'));
    expect(validate).toBeLessThan(steps.findIndex((r) => / build /.test(r)));
  });
});
