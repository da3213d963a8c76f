// Upload progress on stderr: a redrawn line on a terminal, plain lines (at most every 10%, and at the end) in CI logs.
export interface TransferProgress {
  /** One object done (uploaded, checked or deleted) with its size. */
  add(bytes: number): void;
  /** Ends the line; returns the figures for the summary. */
  end(): { objects: number; bytes: number; seconds: number };
}

const mb = (n: number) => (n / 1e6).toFixed(1);

export function createTransferProgress(
  stream: NodeJS.WriteStream | null,
  label: string,
  totalObjects: number,
  totalBytes: number,
  /** Requests retried so far (the targets count them). */
  retries: () => number = () => 0,
): TransferProgress {
  const tty = Boolean(stream?.isTTY) && !process.env.CI;
  const started = performance.now();
  let objects = 0;
  let bytes = 0;
  let lastDraw = 0;
  let lastDecile = -1;
  const seconds = () => (performance.now() - started) / 1000;
  const line = () => {
    const s = seconds();
    const rate = s > 0 ? `, ${mb(bytes / s)} MB/s, ${Math.round(objects / s)} objects/s` : '';
    const retried = retries() ? `, ${retries()} requests retried` : '';
    return `${label}: ${objects}/${totalObjects} objects, ${mb(bytes)}/${mb(totalBytes)} MB${rate}${retried}`;
  };
  return {
    add(n) {
      objects++;
      bytes += n;
      if (!stream || !totalObjects) return;
      if (tty) {
        const now = performance.now();
        if (now - lastDraw < 100) return;
        lastDraw = now;
        stream.write(`\r\x1b[2K${line()}`);
      } else {
        const decile = Math.floor((objects / totalObjects) * 10);
        if (decile > lastDecile && decile < 10) {
          lastDecile = decile;
          stream.write(`${line()} (${decile * 10}%)\n`);
        }
      }
    },
    end() {
      if (stream && totalObjects) stream.write(`${tty ? '\r\x1b[2K' : ''}${line()}, ${seconds().toFixed(1)} s\n`);
      return { objects, bytes, seconds: seconds() };
    },
  };
}
