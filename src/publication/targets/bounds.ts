// The deadline and minimum rate every read from an origin keeps (GetOptions, types.ts), enforced in one place for
// every target: the whole read, retries included, ends by its deadline, and a transfer slower than the minimum rate
// over a window is cut, whatever the host does (answers nothing, or trickles a byte now and then).
import type { GetOptions, ReadBounds } from './types.js';

/**
 * The defaults, as the S3 SDK's and nginx's own: 60 s for the whole read (nginx's proxy_read_timeout, the AWS CLI's
 * read timeout) and at least 1 KiB/s over each 10 s window (curl's low-speed limit, in spirit): a host that answers
 * nothing for 10 s, or trickles, fails the read. The gateway asks for a shorter deadline (server.ts).
 */
export const DEFAULT_READ_BOUNDS: Required<ReadBounds> = {
  deadlineMs: 60_000,
  minBytesPerSecond: 1024,
  rateWindowMs: 10_000,
};

/** A read cut by its deadline or its minimum rate; never retried (the deadline covers the retries). */
export class ReadTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(message: string) {
    super(message);
    this.name = 'ReadTimeoutError';
  }
}

/** What a read in progress is given: the signal that ends it, and where it counts the bytes it receives. */
export interface Transfer {
  readonly signal: AbortSignal;
  received(bytes: number): void;
}

/**
 * Runs `read` within its bounds: `g`'s, else the reader's, else the defaults. `what` names the read in the error
 * ("GET https://host/key", credentials already masked). `read` passes the signal to whatever can be aborted (the
 * request, a retry's wait) and counts what it receives; the result is a ReadTimeoutError the moment a bound is broken.
 */
export async function bounded<T>(
  what: string,
  g: GetOptions,
  reader: ReadBounds | undefined,
  read: (t: Transfer) => Promise<T>,
): Promise<T> {
  const b = { ...DEFAULT_READ_BOUNDS, ...stripUndefined(reader), ...stripUndefined(g) };
  const ac = new AbortController();
  const fail = (why: string) => ac.abort(new ReadTimeoutError(`${what}: ${why}`));
  let got = 0;
  let atWindowStart = 0;
  const deadline = setTimeout(
    () => fail(`no complete answer within ${b.deadlineMs} ms (the read's deadline; ${got} bytes received)`),
    b.deadlineMs,
  );
  const perWindow = (b.minBytesPerSecond * b.rateWindowMs) / 1000;
  const rate =
    perWindow > 0
      ? setInterval(() => {
          if (got - atWindowStart < perWindow)
            fail(
              `slower than the minimum rate of ${b.minBytesPerSecond} bytes/s: ${got - atWindowStart} bytes in ` +
                `${b.rateWindowMs} ms`,
            );
          atWindowStart = got;
        }, b.rateWindowMs)
      : undefined;
  const aborted = new Promise<never>((_, reject) =>
    ac.signal.addEventListener('abort', () => reject(ac.signal.reason), { once: true }),
  );
  try {
    return await Promise.race([read({ signal: ac.signal, received: (n) => void (got += n) }), aborted]);
  } finally {
    clearTimeout(deadline);
    clearInterval(rate);
  }
}

const stripUndefined = <T extends object>(o: T | undefined): Partial<T> =>
  Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
