// The publish lock: one publish or rollback at a time changes a remote. An object at LOCK_KEY, created only where
// none is (S3's conditional `PutObject` with `If-None-Match: *`; an exclusive create in a folder), naming its owner
// and when it expires. A lock past its expiry, or one whose process is gone from this very host, is taken over by a
// conditional write that replaces only the version that was read (S3's `If-Match`), so of two processes that both
// find it stale one alone gets it. Its holder looks at it again before it moves the pointer and before it deletes
// anything, and releases it in a finally. Delete the object by hand to clear a lock no running publish holds.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { RemoteBusy } from '../errors.js';
import { redactUrl } from '../redact.js';
import { pidAlive } from '../pid-alive.js';
import { JSON_CONTENT_TYPE } from '../schema/primitives.js';
import { LOCK_KEY } from './remote.js';
import type { RemoteTarget } from './targets/types.js';

export const LOCK_FORMAT = 'modelpub-lock/1';

/**
 * Longer than any publish should take (the default data's first publish: under two minutes on a shared machine),
 * short enough that a publish killed with its lock held (a CI job cancelled) blocks the next ones for a while only.
 */
export const LOCK_TTL_MS = 30 * 60_000;

/** publish-lock.json. */
export const LockFile = z.strictObject({
  format: z.literal(LOCK_FORMAT),
  /** Unique to one acquisition: its holder knows the lock is still its own by this. */
  token: z.string().min(1),
  owner: z.strictObject({
    host: z.string(),
    pid: z.number().int(),
    /** What the holder does: `publish REVISION` or `rollback to REVISION`. */
    action: z.string(),
  }),
  acquiredAt: z.string().datetime(),
  expiresAt: z.string().datetime(),
});
export type LockFile = z.infer<typeof LockFile>;

export interface HeldLock {
  /** Why a stale lock was taken over (for the output), or null when there was none. */
  tookOver: string | null;
  /** Throws RemoteBusy when the lock is no longer this process's (taken over after it expired, or deleted). */
  check(): Promise<void>;
  /** Delete the lock if it is still this process's; never anyone else's. */
  release(): Promise<void>;
}

export interface LockOptions {
  action: string;
  ttlMs?: number;
  now?: () => Date;
}

const PUT = { contentType: JSON_CONTENT_TYPE, cacheControl: 'no-store' };

const whereOf = (target: RemoteTarget) => `${redactUrl(target.description).replace(/\/?$/, '/')}${LOCK_KEY}`;

/** The lock as read, or why it cannot be read. */
function parse(body: Buffer): LockFile | string {
  try {
    const r = LockFile.safeParse(JSON.parse(body.toString('utf8')));
    return r.success ? r.data : `not a modelpub lock: ${r.error.issues[0]?.message ?? 'invalid'}`;
  } catch (e) {
    return `not JSON: ${(e as Error).message}`;
  }
}

const describeOwner = (l: LockFile) =>
  `${l.owner.action} by pid ${l.owner.pid} on ${l.owner.host}, since ${l.acquiredAt}, until ${l.expiresAt}`;

/** Why a lock may be taken over, or null while it holds. A lock that cannot be read is never taken over. */
function staleReason(l: LockFile, now: Date): string | null {
  if (Date.parse(l.expiresAt) <= now.getTime()) return `it expired at ${l.expiresAt} (${describeOwner(l)})`;
  if (l.owner.host === hostname() && l.owner.pid !== process.pid && !pidAlive(l.owner.pid))
    return `its process is gone from this host (${describeOwner(l)})`;
  return null;
}

export async function acquireLock(target: RemoteTarget, o: LockOptions): Promise<HeldLock> {
  const now = o.now ?? (() => new Date());
  const at = now();
  const mine: LockFile = {
    format: LOCK_FORMAT,
    token: randomUUID(),
    owner: { host: hostname(), pid: process.pid, action: o.action },
    acquiredAt: at.toISOString(),
    expiresAt: new Date(at.getTime() + (o.ttlMs ?? LOCK_TTL_MS)).toISOString(),
  };
  const body = Buffer.from(`${JSON.stringify(mine, null, 2)}\n`);
  const where = whereOf(target);
  const ours = (l: LockFile | string) => typeof l !== 'string' && l.token === mine.token;
  const read = async () => {
    const held = await target.getTagged(LOCK_KEY);
    return held && { ...held, lock: parse(held.body) };
  };
  const handle = (tookOver: string | null): HeldLock => ({
    tookOver,
    async check() {
      const held = await read();
      if (held && ours(held.lock)) return;
      throw new RemoteBusy(
        `the publish lock ${where} is no longer this publish's: ` +
          (!held
            ? 'it was deleted'
            : typeof held.lock === 'string'
              ? `it was replaced by one that cannot be read (${held.lock})`
              : `${describeOwner(held.lock)} holds it now`),
      );
    },
    async release() {
      const held = await read();
      if (held && ours(held.lock)) await target.delete([LOCK_KEY]);
    },
  });
  // A few rounds: each one lost means another process created, released or took over the lock in between.
  for (let round = 0; round < 5; round++) {
    let tookOver: string | null = null;
    let got = await target.putIf(LOCK_KEY, body, PUT, null);
    if (!got) {
      const held = await read();
      if (!held) continue; // released meanwhile
      // Our own, when a retried PUT had in fact been stored before its connection failed.
      if (ours(held.lock)) return handle(null);
      if (typeof held.lock === 'string')
        throw new RemoteBusy(
          `${where} is there but ${held.lock}; nothing was changed. If no publish is running, delete it and run again`,
        );
      tookOver = staleReason(held.lock, now());
      if (!tookOver)
        throw new RemoteBusy(
          `another publish holds the lock on ${redactUrl(target.description)}: ${describeOwner(held.lock)}; ` +
            `nothing was changed. Run again once it is done; if that process is gone, delete ${where}`,
        );
      got = await target.putIf(LOCK_KEY, body, PUT, held.tag);
      if (!got) continue;
    }
    // Read back: a host that ignores the condition (s3rver) lets a second writer replace the lock unseen.
    const back = await read();
    if (back && ours(back.lock)) return handle(tookOver);
    if (back && typeof back.lock !== 'string')
      throw new RemoteBusy(
        `another publish took the lock on ${redactUrl(target.description)} at the same moment: ` +
          `${describeOwner(back.lock)}; nothing was changed`,
      );
  }
  throw new RemoteBusy(`the lock ${where} kept changing hands; nothing was changed: run again`);
}
