// A throwaway nginx (Debian's package) on a free loopback port serving a folder with docs/examples/nginx-remote.conf,
// the configuration the docs give for a file:// remote. Tests skip, saying so, when nginx is not installed.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './cli.js';
import { freePort } from './redis.js';
import { tracked } from './children.js';
import { tick } from './wait.js';

export const NGINX_MISSING = 'nginx not installed: the static-host tests of publish were skipped';

export function nginxPath(): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin']) {
    if (dir && existsSync(path.join(dir, 'nginx'))) return path.join(dir, 'nginx');
  }
  return null;
}

export interface Nginx {
  url: string;
  stop(): Promise<void>;
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

export async function startNginx(root: string): Promise<Nginx> {
  const bin = nginxPath();
  if (!bin) throw new Error(NGINX_MISSING);
  const tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-nginx-'));
  const port = await freePort();
  // Run as root, nginx's workers would switch to `nobody`, who cannot read a test's temporary folders.
  const user = process.getuid?.() === 0 ? 'user root;' : '';
  const conf = `${user}
worker_processes 1;
pid ${tmp}/nginx.pid;
error_log ${tmp}/error.log warn;
daemon off;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${tmp}/client_body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    include ${path.join(ROOT, 'docs/examples/nginx-remote.conf')};
  }
}
`;
  await writeFile(path.join(tmp, 'nginx.conf'), conf);
  const child = tracked(
    spawn(bin, ['-p', tmp, '-e', path.join(tmp, 'error.log'), '-c', path.join(tmp, 'nginx.conf')], {
      stdio: 'ignore',
    }),
  );
  // Until it listens or exits (a port taken, a bad configuration), however long that takes on a loaded machine.
  while (child.exitCode === null && !(await listening(port))) await tick(50);
  if (child.exitCode !== null || !(await listening(port))) {
    child.kill('SIGKILL');
    const log = await readFile(path.join(tmp, 'error.log'), 'utf8').catch(() => '');
    await rm(tmp, { recursive: true, force: true });
    throw new Error(`nginx did not start on port ${port}:\n${log}`);
  }
  return {
    url: `http://127.0.0.1:${port}/`,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGQUIT');
        await exited;
      }
      await rm(tmp, { recursive: true, force: true });
    },
  };
}
