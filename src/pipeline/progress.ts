// Build progress on stderr: a redrawn line on a terminal, plain lines (at most every 10%) in CI logs.
export interface Progress {
  phase(name: string, total?: number): void;
  tick(done: number): void;
  end(): void;
}

export function createProgress(stream: NodeJS.WriteStream | null = process.stderr): Progress {
  if (!stream) return { phase() {}, tick() {}, end() {} };
  const tty = Boolean(stream.isTTY) && !process.env.CI;
  let name = '';
  let total = 0;
  let started = 0;
  let lastDraw = 0;
  let lastDecile = -1;
  const secs = () => ((performance.now() - started) / 1000).toFixed(1);
  const finish = () => {
    if (!name) return;
    if (tty) stream.write('\r\x1b[2K');
    stream.write(`${name}: done${total ? ` (${total})` : ''} in ${secs()} s\n`);
    name = '';
  };
  return {
    phase(n, t = 0) {
      finish();
      [name, total, started, lastDecile] = [n, t, performance.now(), -1];
    },
    tick(done) {
      if (!total) return;
      const now = performance.now();
      if (tty) {
        if (now - lastDraw < 100) return;
        lastDraw = now;
        const width = 30;
        const filled = Math.round((done / total) * width);
        stream.write(
          `\r\x1b[2K${name} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${secs()} s`,
        );
      } else {
        const decile = Math.floor((done / total) * 10);
        if (decile > lastDecile && decile < 10) {
          lastDecile = decile;
          stream.write(`${name}: ${done}/${total} (${decile * 10}%) ${secs()} s\n`);
        }
      }
    },
    end: finish,
  };
}
