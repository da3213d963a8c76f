// `modelpub publish`: a local release to a remote in the remote layout (src/publication/remote.ts), in an order that
// keeps the live publication whole at every moment:
//   1. the new manifest (immutable; it names everything this publish uploads, so a later publish can clean up after
//      an interrupted one),
//   2. the objects the remote lacks,
//   3. a check that every object the new manifest names and kept manifests do not is there, with its size,
//   4. the pointer (the switch),
//   5. only then, deletion of what no kept publication names.
// A publish stopped anywhere before 4 leaves the pointer where it was; run again, it finds what was uploaded and
// uploads the rest.
import { stat } from 'node:fs/promises';
import pMap from 'p-map';
import { RemoteBusy, UsageError } from '../errors.js';
import type { Manifest } from '../publication/files.js';
import { acquireLock, type HeldLock } from '../publication/lock.js';
import { remoteLayout } from '../publication/remote-source.js';
import { IntegrityError } from '../publication/integrity.js';
import { openSource, type Source } from '../publication/source.js';
import type { RemoteTarget } from '../publication/targets/types.js';
import { JSON_CONTENT_TYPE } from '../schema/primitives.js';
import {
  GZIP_CONTENT_TYPE,
  IMMUTABLE_CACHE_CONTROL,
  manifestKeyOf,
  objectKey,
  type Pointer,
  POINTER_CACHE_CONTROL,
  POINTER_KEY,
  pointerBytes,
  publicationId,
  type RemotePublication,
} from '../publication/remote.js';
import {
  type Deletion,
  manifestOnRemote,
  planDeletion,
  planPublish,
  planRollback,
  type PublishPlan,
  readRemoteState,
  type RemoteState,
  type Upload,
  uploadOf,
} from './plan.js';
import { createTransferProgress } from './progress.js';

export interface PublishOptions {
  /** A build's --out folder, one release folder, or anything else openSource opens. */
  from: string;
  target: RemoteTarget;
  /** Publications kept on the remote, the live one included (older ones are deleted after the switch). */
  keep: number;
  concurrency: number;
  dryRun?: boolean;
  /** Where the plan and the summary go (stdout). */
  say?: (line: string) => void;
  /** Where progress goes (stderr); null for none. */
  progress?: NodeJS.WriteStream | null;
  /** Requests retried so far, for the progress line. */
  retries?: () => number;
  /** Awaited between the plan and the first upload, the lock held (tests pause a publish there). */
  afterPlan?: () => Promise<void>;
}

export interface PublishResult {
  revision: string;
  alreadyLive: boolean;
  uploaded: { objects: number; bytes: number; seconds: number };
  manifestUploaded: boolean;
  /** Objects no kept manifest listed that an earlier, interrupted publish had uploaded. */
  found: number;
  /** Objects kept manifests listed: nothing was asked of the remote for them. */
  known: number;
  pointerMoved: boolean;
  deleted: { objects: number; bytes: number; manifests: number };
}

const mb = (n: number) => (n / 1e6).toFixed(1);
const short = (sha: string) => `${sha.slice(0, 12)}…`;
const rev = (p: RemotePublication) => p.publication.publicationRevision;
const revisionsOf = (ms: Array<{ revision: string }>) => {
  const revs = [...new Set(ms.map((m) => m.revision))];
  return `the manifest${ms.length === 1 ? '' : 's'} of ${revs.join(', ')}`;
};
const keptLine = (p: Pointer) =>
  p.previous.length ? `kept for a rollback: ${p.previous.map(rev).join(', ')}` : 'no other publication kept';

export async function publish(o: PublishOptions): Promise<PublishResult> {
  const say = o.say ?? ((l: string) => console.log(l));
  const source = await openFrom(o.from);
  try {
    return await publishFrom(source, o, say);
  } finally {
    await source.close();
  }
}

/** --from, opened: a folder that is not there is told as such (a build has not run). */
async function openFrom(from: string): Promise<Source> {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(from) && !(await stat(from).catch(() => null)))
    throw new UsageError(`--from ${from} does not exist: give a build's --out folder (run modelpub build first)`);
  return openSource(from);
}

async function publishFrom(source: Source, o: PublishOptions, say: (l: string) => void): Promise<PublishResult> {
  // Every object is read through the release, so checked against its manifest before it leaves the machine.
  const live = await source.live();
  if (!live)
    throw new UsageError(
      `--from ${o.from} holds no publication (${source.nothingPublished}): give a build's --out folder, or one release folder`,
    );
  const local = uploadOf(live);
  await refuseForeign(o.target);
  if (o.dryRun) return publishPlanned(local, o, say, null);
  const lock = await acquireLock(o.target, { action: `publish ${rev(local.entry)}` });
  try {
    if (lock.tookOver) say(`took over the publish lock of ${o.target.description}: ${lock.tookOver}`);
    return await publishPlanned(local, o, say, lock);
  } finally {
    await lock.release().catch((e: Error) => say(`warning: the publish lock could not be released: ${e.message}`));
  }
}

/** Plan, then (unless a dry run) upload, check, switch and prune, holding the lock from before the plan. */
async function publishPlanned(
  local: Upload,
  o: PublishOptions,
  say: (l: string) => void,
  lock: HeldLock | null,
): Promise<PublishResult> {
  const state = await readRemoteState(o.target);
  const plan = await planPublish(local, o.target, state, o.keep);
  describePlan(plan, o.target, say);
  const result: PublishResult = {
    revision: rev(local.entry),
    alreadyLive: plan.alreadyLive,
    uploaded: { objects: 0, bytes: 0, seconds: 0 },
    manifestUploaded: false,
    found: plan.found.length,
    known: plan.known,
    pointerMoved: false,
    deleted: { objects: 0, bytes: 0, manifests: 0 },
  };
  if (!lock) {
    listPlan(plan, say);
    say('dry run: nothing was uploaded, written or deleted');
    return result;
  }
  await o.afterPlan?.();
  if (plan.uploadManifest) {
    await o.target.put(manifestKeyOf(local.entry), local.storedManifest, {
      contentType: GZIP_CONTENT_TYPE,
      cacheControl: IMMUTABLE_CACHE_CONTROL,
    });
    result.manifestUploaded = true;
  }
  result.uploaded = await uploadObjects(local, plan, o);
  // Before a switch, every object the new manifest names, not only those uploaded: one a kept publication lists may
  // be gone (a prune by a publish that did not hold the lock, a hand), and the pointer must never name a publication
  // with a missing object.
  const missing = await missingOf(o.target, [
    ...(plan.pointer ? [...local.objects.values()] : plan.upload).map((x) => ({
      key: objectKey(x.sha256),
      bytes: x.bytes,
    })),
    ...(plan.uploadManifest || plan.pointer
      ? [{ key: manifestKeyOf(local.entry), bytes: local.storedManifest.length }]
      : []),
  ]);
  if (missing) throw new IntegrityError(`after the uploads, ${missing}: the pointer was not moved; publish again`);
  let fresh: RemoteState | null = null;
  if (plan.pointer) {
    await lock.check();
    await refuseMoved(o.target, state.pointer, 'this publish planned');
    await o.target.put(POINTER_KEY, pointerBytes(plan.pointer), {
      contentType: JSON_CONTENT_TYPE,
      cacheControl: POINTER_CACHE_CONTROL,
    });
    result.pointerMoved = true;
    // Read again for the prune, just before it: the pointer (still this one's?) and every manifest under revisions/.
    fresh = await readRemoteState(o.target, knownManifests(local, state));
    if (!samePointer(fresh.pointer, plan.pointer))
      throw new RemoteBusy(
        `right after this publish moved the pointer of ${o.target.description} to ${rev(local.entry)}, another ` +
          `process moved it to ${fresh.pointer ? rev(fresh.pointer.live) : 'nothing'}: ${rev(local.entry)} is not ` +
          'live and nothing was deleted',
      );
  }
  const pointer = plan.pointer ?? state.pointer!;
  const up = result.uploaded;
  const did = [
    result.manifestUploaded ? 'the manifest' : '',
    up.objects
      ? `${up.objects} objects (${mb(up.bytes)} MB${up.seconds > 0 ? `, ${mb(up.bytes / up.seconds)} MB/s` : ''})`
      : '',
    result.pointerMoved ? 'the pointer' : '',
  ].filter(Boolean);
  const uploaded = did.length > 1 ? `${did.slice(0, -1).join(', ')} and ${did.at(-1)}` : did[0];
  say(
    `${plan.alreadyLive ? 'still live' : 'live'}: ${rev(local.entry)} at ${o.target.description} (${keptLine(pointer)}); ` +
      (uploaded ? `uploaded ${uploaded}` : 'nothing uploaded'),
  );
  const planned = plan.deletion.manifests.length + plan.deletion.objects.length > 0;
  // Nothing to delete in the plan and no switch: the state is not read again (a republish stays request-free).
  if (!fresh && planned) fresh = await readRemoteState(o.target, knownManifests(local, state));
  result.deleted = fresh
    ? await pruneAfter(o.target, fresh, pointer, lock, say)
    : await deleteUnkept(o.target, plan.deletion, say);
  return result;
}

/** The manifests this publish has read or holds, by key: named by their hash, so never another's bytes. */
function knownManifests(local: Upload, state: RemoteState): Map<string, Manifest> {
  const out = new Map(state.kept.map((k) => [manifestKeyOf(k.entry), k.manifest]));
  out.set(manifestKeyOf(local.entry), local.release.manifest);
  return out;
}

const samePointer = (a: Pointer | null, b: Pointer | null) => JSON.stringify(a) === JSON.stringify(b);

/** The pointer read again just before it is written: another process that moved it since wins, and this one stops. */
async function refuseMoved(target: RemoteTarget, planned: Pointer | null, when: string): Promise<void> {
  const now = await remoteLayout(target).pointer();
  if (samePointer(now, planned)) return;
  const live = (p: Pointer | null) => (p ? rev(p.live) : 'nothing');
  throw new RemoteBusy(
    `the pointer of ${target.description} changed since ${when} (live then: ${live(planned)}, now: ${live(now)}): ` +
      'another publish or rollback moved it; the pointer was not moved: run again',
  );
}

/**
 * Delete what no kept publication names, worked out again from the state read after the switch (`fresh`), never from
 * the plan: what another process wrote or kept since the plan is spared. Nothing is deleted when the pointer is not
 * the one this publish left, when the lock is no longer its own, or when a kept manifest cannot be read (what it
 * names is not known).
 */
async function pruneAfter(
  target: RemoteTarget,
  fresh: RemoteState,
  pointer: Pointer,
  lock: HeldLock,
  say: (l: string) => void,
) {
  const none = { objects: 0, bytes: 0, manifests: 0 };
  const skip = (why: string) => {
    say(`warning: nothing deleted: ${why}`);
    return none;
  };
  if (!samePointer(fresh.pointer, pointer))
    return skip(`the pointer of ${target.description} was moved by another process meanwhile`);
  if (fresh.damaged.length)
    return skip(
      `kept publication ${fresh.damaged.map((d) => rev(d.entry)).join(', ')} cannot be read back ` +
        `(${fresh.damaged[0]!.error})`,
    );
  const deletion = await planDeletion(
    target,
    fresh,
    pointer,
    fresh.kept.map((k) => k.manifest),
  );
  if (deletion.manifests.length || deletion.objects.length) {
    try {
      await lock.check();
    } catch (e) {
      return skip((e as Error).message);
    }
  }
  return deleteUnkept(target, deletion, say);
}

async function uploadObjects(local: Upload, plan: PublishPlan, o: PublishOptions) {
  const total = plan.upload.reduce((n, x) => n + x.bytes, 0);
  const progress = createTransferProgress(o.progress ?? null, 'upload', plan.upload.length, total, o.retries);
  // Largest first: the long uploads start early instead of trailing at the end of the run.
  const order = [...plan.upload].sort((a, b) => b.bytes - a.bytes);
  await pMap(
    order,
    async (x) => {
      const body = await local.release.read(x);
      await o.target.put(objectKey(x.sha256), body, {
        contentType: x.contentType,
        cacheControl: IMMUTABLE_CACHE_CONTROL,
      });
      progress.add(x.bytes);
    },
    { concurrency: o.concurrency },
  );
  return progress.end();
}

/**
 * A remote with no publication yet is written to only if it is empty or holds what a publish writes (an interrupted
 * first publish's): the rule `build --out` keeps (folder.ts checkOutDir), so `--to file:///` is refused.
 */
async function refuseForeign(target: RemoteTarget): Promise<void> {
  const names = (await target.foreignNames?.()) ?? [];
  if (names.length && (await target.sizes([POINTER_KEY])).get(POINTER_KEY) === null)
    throw new UsageError(
      `--to ${target.description} holds no publication but files that modelpub did not write ` +
        `(${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''}): choose an empty or new folder`,
    );
}

/** Which of the keys are not there with their size, said in a sentence; null when all are. */
async function missingOf(target: RemoteTarget, expected: Array<{ key: string; bytes: number }>) {
  if (!expected.length) return null;
  const sizes = await target.sizes(expected.map((e) => e.key));
  const bad = expected.filter((e) => sizes.get(e.key) !== e.bytes);
  if (!bad.length) return null;
  const first = bad[0]!;
  const got = sizes.get(first.key);
  const state = got === null || got === undefined ? 'missing' : `${got} bytes, not ${first.bytes}`;
  return `${bad.length} object${bad.length === 1 ? ' is' : 's are'} not on ${target.description} whole (first: ${first.key}, ${state})`;
}

async function deleteUnkept(target: RemoteTarget, d: Deletion, say: (l: string) => void) {
  for (const u of d.unreadable) say(`warning: refused ${u.key}: ${u.error}`);
  if (d.swept)
    say(
      'warning: what those manifests named cannot be known: every object no kept publication names is deleted with them',
    );
  if (!d.manifests.length && !d.objects.length) return { objects: 0, bytes: 0, manifests: 0 };
  // Objects first, the manifests that name them last: a prune stopped midway is taken up by the next publish.
  await target.delete(d.objects.map((x) => x.key));
  await target.delete(d.manifests.map((m) => m.key));
  const bytes = d.objects.reduce((n, x) => n + x.bytes, 0);
  say(
    `deleted ${d.objects.length} objects (${mb(bytes)} MB) no kept publication names, and ${revisionsOf(d.manifests)}`,
  );
  return { objects: d.objects.length, bytes, manifests: d.manifests.length };
}

function describePlan(plan: PublishPlan, target: RemoteTarget, say: (l: string) => void): void {
  const { local } = plan;
  const total = [...local.objects.values()].reduce((n, x) => n + x.bytes, 0);
  say(
    `publishing ${rev(local.entry)} (manifest ${short(local.entry.manifest.sha256)}, ` +
      `${local.release.manifest.files.length} paths, ${local.objects.size} objects, ${mb(total)} MB) from ${local.release.where}`,
  );
  for (const w of plan.warnings) say(`warning: ${w}`);
  if (!plan.live) say(`  to ${target.description}: nothing published there yet`);
  else say(`  to ${target.description}: live ${rev(plan.live)} (manifest ${short(plan.live.manifest.sha256)})`);
  if (plan.alreadyLive) say(`  ${rev(local.entry)} is the live publication there: nothing to upload`);
  else if (plan.diff)
    say(
      `  against ${rev(plan.live!)}: ${plan.diff.added} paths added, ${plan.diff.changed} changed, ${plan.diff.removed} removed`,
    );
  const up = plan.upload.reduce((n, x) => n + x.bytes, 0);
  say(
    `  objects: ${plan.upload.length} to upload (${mb(up)} MB); ${plan.known} listed by kept publications` +
      (plan.found.length ? `, ${plan.found.length} found from an interrupted publish` : '') +
      '; each checked on the remote',
  );
  if (plan.repair.length)
    say(
      `  repair: ${plan.repair.length} of them are on the remote damaged (first: ${objectKey(plan.repair[0]!.sha256)}), ` +
        'and are uploaded again',
    );
  if (plan.manifestDamaged) say(`  repair: the manifest is on the remote damaged (${plan.manifestDamaged})`);
  if (!plan.alreadyLive || plan.uploadManifest)
    say(
      '  manifest: ' +
        `${plan.uploadManifest ? `to upload (${mb(local.storedManifest.length)} MB gzipped)` : 'already there'}; then ` +
        'the pointer',
    );
  const d = plan.deletion;
  if (d.manifests.length || d.objects.length)
    say(
      `  after the switch: delete ${d.objects.length} objects (${mb(d.objects.reduce((n, x) => n + x.bytes, 0))} MB) ` +
        `and ${revisionsOf(d.manifests)}, no longer kept`,
    );
}

function listPlan(plan: PublishPlan, say: (l: string) => void): void {
  if (plan.uploadManifest)
    say(`would upload ${manifestKeyOf(plan.local.entry)} (${plan.local.storedManifest.length} bytes)`);
  for (const x of plan.upload) say(`would upload ${objectKey(x.sha256)} (${x.bytes} bytes, ${x.path})`);
  if (plan.pointer) say(`would write ${POINTER_KEY}: ${rev(plan.pointer.live)} live, ${keptLine(plan.pointer)}`);
  for (const x of plan.deletion.objects) say(`would delete ${x.key} (${x.bytes} bytes)`);
  for (const m of plan.deletion.manifests) say(`would delete ${m.key}`);
}

export interface RollbackOptions {
  target: RemoteTarget;
  revision: string;
  dryRun?: boolean;
  say?: (line: string) => void;
}

/** Move the pointer back to a kept publication, once every object it names is found there. */
export async function rollback(o: RollbackOptions): Promise<{ moved: boolean; pointer: Pointer }> {
  const say = o.say ?? ((l: string) => console.log(l));
  if (o.dryRun) return rollbackLocked(o, say, null);
  const lock = await acquireLock(o.target, { action: `rollback to ${o.revision}` });
  try {
    if (lock.tookOver) say(`took over the publish lock of ${o.target.description}: ${lock.tookOver}`);
    return await rollbackLocked(o, say, lock);
  } finally {
    await lock.release().catch((e: Error) => say(`warning: the publish lock could not be released: ${e.message}`));
  }
}

async function rollbackLocked(o: RollbackOptions, say: (l: string) => void, lock: HeldLock | null) {
  const state = await readRemoteState(o.target);
  const plan = await planRollback(o.target, state, o.revision);
  if (publicationId(plan.to.entry) === publicationId(plan.from)) {
    say(`${o.revision} is already live at ${o.target.description}: nothing to do`);
    return { moved: false, pointer: state.pointer! };
  }
  // Its manifest was just read back whole; the objects it names and the live one does not are looked for.
  const missing = await missingOf(
    o.target,
    plan.check.map((x) => ({ key: objectKey(x.sha256), bytes: x.bytes })),
  );
  if (missing) throw new IntegrityError(`cannot roll back to ${o.revision}: ${missing}: the pointer was not moved`);
  // The rolled-back publication goes live under a manifest of its own, with later times (plan.ts RollbackPlan).
  const manifestKey = manifestKeyOf(plan.again.entry);
  if (!lock) {
    say(`would upload ${manifestKey} (${plan.again.storedManifest.length} bytes: its times past every kept one's)`);
    say(`would write ${POINTER_KEY}: ${o.revision} live, ${keptLine(plan.pointer)}`);
    say('dry run: nothing was written');
    return { moved: false, pointer: state.pointer! };
  }
  if (!(await manifestOnRemote(o.target, plan.again.entry)).there)
    await o.target.put(manifestKey, plan.again.storedManifest, {
      contentType: GZIP_CONTENT_TYPE,
      cacheControl: IMMUTABLE_CACHE_CONTROL,
    });
  const notThere = await missingOf(o.target, [{ key: manifestKey, bytes: plan.again.storedManifest.length }]);
  if (notThere) throw new IntegrityError(`cannot roll back to ${o.revision}: ${notThere}: the pointer was not moved`);
  await lock.check();
  await refuseMoved(o.target, state.pointer, 'this rollback read it');
  await o.target.put(POINTER_KEY, pointerBytes(plan.pointer), {
    contentType: JSON_CONTENT_TYPE,
    cacheControl: POINTER_CACHE_CONTROL,
  });
  say(
    `rolled back ${o.target.description} from ${rev(plan.from)} to ${o.revision} (${keptLine(plan.pointer)}); ` +
      `its changed bodies are dated ${plan.again.entry.publication.publishedAt}, past every kept publication`,
  );
  return { moved: true, pointer: plan.pointer };
}
