// Retries for requests to a remote store: an object store answers 503 SlowDown or 429 under load and drops
// connections now and then; a publish of 30,000 objects meets some of these and must not fail for them.
import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** Tries in all, the first included. */
  attempts?: number;
  /** Delay before the first retry; it doubles each time (with jitter) up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Told before each retry (progress output counts them). */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  /** Ends the retries (and a wait between two) when aborted: a read's deadline (targets/bounds.ts) covers them all. */
  signal?: AbortSignal;
}

const RETRYABLE_NAMES = new Set([
  'SlowDown',
  'ServiceUnavailable',
  'InternalError',
  'RequestTimeout',
  'RequestTimeTooSkewed', // the SDK corrects its clock from the answer: the next try is signed right
  'ThrottlingException',
  'TooManyRequestsException',
  'TimeoutError',
]);
const RETRYABLE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** The HTTP status an error carries: the AWS SDK's $metadata, or our own HTTP client's `status`. */
export function statusOf(e: unknown): number | undefined {
  const x = e as { $metadata?: { httpStatusCode?: number }; status?: number } | null;
  return x?.$metadata?.httpStatusCode ?? x?.status;
}

/** 5xx, 429, S3's throttling names, and network errors (a reset, a refused or timed-out connection). */
export function isRetryable(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  const status = statusOf(e);
  if (status !== undefined && (status >= 500 || status === 429)) return true;
  const x = e as { name?: string; code?: string; message?: string; cause?: unknown };
  if ((x.name && RETRYABLE_NAMES.has(x.name)) || (x.code && RETRYABLE_CODES.has(x.code))) return true;
  if (typeof x.message === 'string' && /socket hang up|aborted/i.test(x.message)) return true;
  return x.cause !== undefined && x.cause !== e && isRetryable(x.cause);
}

export async function withRetry<T>(fn: () => Promise<T>, o: RetryOptions = {}): Promise<T> {
  const attempts = o.attempts ?? 6;
  const base = o.baseDelayMs ?? 200;
  const max = o.maxDelayMs ?? 10_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (o.signal?.aborted) throw o.signal.reason;
      if (attempt >= attempts || !isRetryable(e)) throw e;
      // "Full jitter": many concurrent uploads throttled together must not all come back at the same moment.
      const delay = Math.round(Math.random() * Math.min(max, base * 2 ** (attempt - 1)));
      o.onRetry?.(e, attempt, delay);
      await sleep(delay, undefined, { signal: o.signal });
    }
  }
}
