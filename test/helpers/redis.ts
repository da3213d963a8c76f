// A real, throwaway redis-server on a free loopback port, for the Redis store tests. Tests call redisServerPath()
// first and skip (saying so) when redis-server is not installed.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { tracked } from './children.js';
import { tick } from './wait.js';

export const REDIS_MISSING = 'redis-server not installed: Redis store tests skipped';

/** The redis-server executable on PATH, or null. */
export function redisServerPath(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, 'redis-server');
    if (existsSync(p)) return p;
  }
  return null;
}

export interface RedisServer {
  url: string;
  port: number;
  /** SIGSTOP / SIGCONT: a server that keeps its connections open but answers nothing. */
  pause(): void;
  resume(): void;
  /** SIGKILL, then start again on the same port: without persistence, with nothing of what it held. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  /** appendonly yes (default no, as the quota tests need no persistence). */
  appendonly?: boolean;
  /** More redis-server arguments, e.g. ['--rename-command', 'CONFIG', '']. */
  args?: string[];
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    let buf = '';
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.once('error', () => done(false));
    sock.once('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      buf += d.toString();
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
    });
  });
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );

/** Starts redis-server (without persistence by default) in a temporary folder and waits until it answers PING. */
export async function startRedis(o: RedisServerOptions = {}): Promise<RedisServer> {
  const bin = redisServerPath();
  if (!bin) throw new Error(REDIS_MISSING);
  const dir = await mkdtemp(path.join(tmpdir(), 'modelpub-redis-'));
  const launch = (port: number) =>
    tracked(
      spawn(
        bin,
        [
          ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir],
          ...['--appendonly', o.appendonly ? 'yes' : 'no', ...(o.args ?? [])],
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    let child = launch(port);
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    // Until it answers or exits (a port taken since freePort()), however long that takes on a loaded machine.
    while (child.exitCode === null && !(await ping(port))) await tick(50);
    if (child.exitCode === null && (await ping(port))) {
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        pause: () => child.kill('SIGSTOP'),
        resume: () => child.kill('SIGCONT'),
        async restart() {
          child.kill('SIGKILL');
          await exited(child);
          child = launch(port);
          while (child.exitCode === null && !(await ping(port))) await tick(50);
        },
        async stop() {
          child.kill('SIGCONT');
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited(child);
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited(child);
    // Another process may have taken the port between freePort() and the bind: try a couple of others.
    if (attempt >= 2) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(`redis-server did not start:\n${output}`);
    }
  }
}
