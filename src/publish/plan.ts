// What a publish will do, worked out before it does anything: which objects the remote lacks or holds damaged,
// which it has, which publications stay kept and what is deleted after the switch. `--dry-run` prints this and stops.
//
// Every object the new publication names is checked on the remote, those the kept manifests list too (its size, and
// its sha256 where the host can tell it without a download), and the new manifest is believed to be there only once
// read back whole: a damaged object or manifest is uploaded again, never trusted because a manifest names it.
import type { Manifest } from '../publication/files.js';
import { remoteLayout } from '../publication/remote-source.js';
import type { Release } from '../publication/source.js';
import type { RemoteTarget } from '../publication/targets/types.js';
import {
  type ObjectSource,
  packManifest,
  objectKey,
  objectsOf,
  keptOf,
  manifestKeyOf,
  manifestRefOf,
  nextPointer,
  parseManifestKey,
  type Pointer,
  publicationId,
  OBJECTS_PREFIX,
  REVISIONS_PREFIX,
  type RemotePublication,
} from '../publication/remote.js';
import { UsageError } from '../errors.js';
import { IntegrityError, sha256Hex } from '../publication/integrity.js';
import { type RemoteTimes, rolledBackTimes } from '../publication/times.js';
import { SHA256_HEX_RE } from '../schema/primitives.js';

/** The release a publish uploads (its --from, opened), as the remote layout holds it. */
export interface Upload {
  release: Release;
  /** The manifest as the remote stores it (packManifest). */
  storedManifest: Buffer;
  /** What the pointer will say of it. */
  entry: RemotePublication;
  objects: Map<string, ObjectSource>;
}

export const uploadOf = (release: Release): Upload => ({
  release,
  storedManifest: packManifest(release.manifestBytes),
  entry: {
    publication: release.meta,
    manifest: { sha256: release.manifestSha256, bytes: release.manifestBytes.length },
  },
  objects: objectsOf(release.manifest),
});

export interface KeptPublication {
  entry: RemotePublication;
  manifest: Manifest;
}

export interface RemoteState {
  pointer: Pointer | null;
  /** The publications the pointer keeps (the live one first) whose manifests were read back whole. */
  kept: KeptPublication[];
  /** Kept publications whose manifest is missing or damaged: nothing they list is trusted, and they are dropped. */
  damaged: Array<{ entry: RemotePublication; error: string }>;
  /** Every manifest under revisions/, kept or not (an interrupted publish leaves one that is not). */
  manifests: Array<{ key: string; revision: string; sha256: string }>;
}

/** `known`: manifests already read whole, by key (named by their hash, so a later read would give the same). */
export async function readRemoteState(target: RemoteTarget, known?: Map<string, Manifest>): Promise<RemoteState> {
  const remote = remoteLayout(target);
  const pointer = await remote.pointer();
  const kept: KeptPublication[] = [];
  const damaged: RemoteState['damaged'] = [];
  for (const entry of pointer ? keptOf(pointer) : []) {
    try {
      const manifest = known?.get(manifestKeyOf(entry)) ?? (await remote.manifest(manifestRefOf(entry))).manifest;
      kept.push({ entry, manifest });
    } catch (e) {
      // Damage drops a publication from the kept ones; a host that did not answer stops the publish instead.
      if (!(e instanceof IntegrityError)) throw e;
      damaged.push({ entry, error: e.message });
    }
  }
  const manifests: RemoteState['manifests'] = [];
  for (const { key } of await target.list(REVISIONS_PREFIX)) {
    const m = parseManifestKey(key);
    if (m) manifests.push({ key, revision: m.revision, sha256: m.sha256 });
  }
  return { pointer, kept, damaged, manifests };
}

export interface Deletion {
  /** Manifests of publications no longer kept (deleted last, so an interrupted prune is taken up again). */
  manifests: Array<{ key: string; revision: string }>;
  /** Objects that no kept publication names. */
  objects: Array<{ key: string; bytes: number }>;
  /** Manifests that could not be read back whole, and why: what they name is not known. */
  unreadable: Array<{ key: string; error: string }>;
  /**
   * Set when there are unreadable manifests: `objects` then also holds every object under objects/ that no kept
   * publication names (what the unreadable ones named), since after the prune the kept manifests are all there is.
   */
  swept: boolean;
}

export interface PublishPlan {
  local: Upload;
  /** The remote already serves this very publication (same revision, same manifest). */
  alreadyLive: boolean;
  /** The live publication before this one, if any. */
  live: RemotePublication | null;
  /** Paths of the new manifest against the live one. */
  diff: { added: number; changed: number; removed: number } | null;
  /** Objects that kept publications already list: no request is made for them. */
  known: number;
  /** Objects no kept publication lists but the remote holds (an interrupted publish uploaded them). */
  found: ObjectSource[];
  upload: ObjectSource[];
  /** Objects of `upload` the remote holds damaged (the wrong size, or the wrong sha256 where it can tell): repaired. */
  repair: ObjectSource[];
  uploadManifest: boolean;
  /** Why the new manifest is uploaded again though its key is there (it is damaged); null otherwise. */
  manifestDamaged: string | null;
  /** The pointer to write; null when it stays as it is. */
  pointer: Pointer | null;
  deletion: Deletion;
  warnings: string[];
}

/** The objects a set of publications names, by key. */
function objectKeysOf(manifests: Manifest[]): Set<string> {
  const out = new Set<string>();
  for (const m of manifests) for (const sha of objectsOf(m).keys()) out.add(objectKey(sha));
  return out;
}

function diffOf(before: Manifest, after: Manifest): PublishPlan['diff'] {
  const old = new Map(before.files.map((f) => [f.path, f.sha256]));
  let added = 0;
  let changed = 0;
  for (const f of after.files) {
    const was = old.get(f.path);
    if (was === undefined) added++;
    else if (was !== f.sha256) changed++;
    old.delete(f.path);
  }
  return { added, changed, removed: old.size };
}

/**
 * What to delete once `pointer` is live: every manifest under revisions/ that it does not keep, and the objects
 * those name that no kept publication names. Objects only ever go with a manifest that named them, so nothing a
 * publication in progress has uploaded under its (already written) manifest is touched while it is kept.
 */
export async function planDeletion(
  target: RemoteTarget,
  state: RemoteState,
  pointer: Pointer,
  keptManifests: Manifest[],
): Promise<Deletion> {
  const remote = remoteLayout(target);
  const keptIds = new Set(keptOf(pointer).map(publicationId));
  const keep = objectKeysOf(keptManifests);
  const byKey = new Map(state.kept.map((k) => [manifestKeyOf(k.entry), k.manifest]));
  const deletion: Deletion = { manifests: [], objects: [], unreadable: [], swept: false };
  const seen = new Set<string>();
  for (const m of state.manifests) {
    if (keptIds.has(`${m.revision}/${m.sha256}`)) continue;
    deletion.manifests.push({ key: m.key, revision: m.revision });
    let manifest = byKey.get(m.key);
    if (!manifest) {
      try {
        // A manifest no kept publication names: its key carries its hash, which the read checks.
        manifest = (await remote.manifest(m)).manifest;
      } catch (e) {
        if (!(e instanceof IntegrityError)) throw e;
        deletion.unreadable.push({ key: m.key, error: e.message });
        continue;
      }
    }
    for (const [sha, o] of objectsOf(manifest)) {
      const key = objectKey(sha);
      if (keep.has(key) || seen.has(key)) continue;
      seen.add(key);
      deletion.objects.push({ key, bytes: o.bytes });
    }
  }
  if (deletion.unreadable.length) {
    // What an unreadable manifest named cannot be known, and once it is deleted nothing names those objects: left,
    // they would stay forever. After the prune the kept manifests are the only ones on the remote, so an object none
    // of them names is referenced by nothing: every such object under objects/ goes (keys of the layout's form only).
    deletion.swept = true;
    for (const { key, bytes } of await target.list(OBJECTS_PREFIX)) {
      const sha = key.slice(key.lastIndexOf('/') + 1);
      if (!SHA256_HEX_RE.test(sha) || objectKey(sha) !== key || keep.has(key) || seen.has(key)) continue;
      seen.add(key);
      deletion.objects.push({ key, bytes });
    }
  }
  return deletion;
}

export async function planPublish(
  local: Upload,
  target: RemoteTarget,
  state: RemoteState,
  keep: number,
): Promise<PublishPlan> {
  const id = publicationId(local.entry);
  const warnings = state.damaged.map(
    (d) =>
      `kept publication ${d.entry.publication.publicationRevision} cannot be read back (${d.error}): ` +
      (publicationId(d.entry) === id ? 'its manifest is uploaded again' : 'it is no longer kept'),
  );
  const live = state.pointer?.live ?? null;
  // The live publication as read back whole (a live one whose manifest is damaged is no base for anything).
  const liveKept =
    live && state.kept[0] && publicationId(state.kept[0].entry) === publicationId(live) ? state.kept[0] : null;
  const alreadyLive = liveKept !== null && publicationId(liveKept.entry) === id;
  const knownKeys = objectKeysOf(state.kept.map((k) => k.manifest));
  const { found, upload, repair } = await checkObjects(target, [...local.objects.values()], knownKeys);
  const keptHere = state.kept.some((k) => publicationId(k.entry) === id);
  const { there: manifestThere, damaged: manifestDamaged } = keptHere
    ? { there: true, damaged: null }
    : await manifestOnRemote(target, local.entry);
  // The pointer as it would be: the damaged publications are left out of what it keeps.
  const trusted: Pointer | null = state.kept.length
    ? {
        format: state.pointer!.format,
        live: state.kept[0]!.entry,
        previous: state.kept.slice(1).map((k) => k.entry),
      }
    : null;
  const next = nextPointer(trusted, local.entry, keep);
  const manifests = new Map(state.kept.map((k) => [publicationId(k.entry), k.manifest]));
  manifests.set(id, local.release.manifest);
  const keptManifests = keptOf(next).map((p) => manifests.get(publicationId(p))!);
  const unchanged = state.pointer !== null && JSON.stringify(state.pointer) === JSON.stringify(next);
  return {
    local,
    alreadyLive,
    live,
    diff: liveKept ? diffOf(liveKept.manifest, local.release.manifest) : null,
    known: local.objects.size - found.length - upload.length,
    found,
    upload,
    repair,
    uploadManifest: !manifestThere,
    manifestDamaged,
    pointer: unchanged ? null : next,
    deletion: await planDeletion(target, state, next, keptManifests),
    warnings,
  };
}

/**
 * Whether the manifest of `p` is on the remote whole. "Already there" is believed only of a manifest read back whole,
 * its JSON against the sha256 in its name, never of one that merely has a size: `damaged` says why one that is there
 * is not whole (it is then uploaded again: it is content-addressed, so rewriting it with the right bytes is safe).
 */
export async function manifestOnRemote(
  target: RemoteTarget,
  p: RemotePublication,
): Promise<{ there: boolean; damaged: string | null }> {
  const key = manifestKeyOf(p);
  // Not its size: another zlib packs the same JSON to other bytes, and the hash that names it is of the JSON.
  if (typeof (await target.sizes([key])).get(key) !== 'number') return { there: false, damaged: null };
  try {
    await remoteLayout(target).manifest(manifestRefOf(p));
    return { there: true, damaged: null };
  } catch (e) {
    if (!(e instanceof IntegrityError)) throw e;
    return { there: false, damaged: e.message };
  }
}

/**
 * Which of the new publication's objects the remote holds whole. Every one is checked, those kept manifests list
 * too: a truncated or altered object is uploaded again rather than trusted because a manifest names it. The size
 * always (a listing, or a HEAD each when they are few); the sha256 where the host tells it without a download (a
 * folder: by reading it). S3 keeps no hash a listing gives: its objects are written whole with Content-MD5, and are
 * damaged only by another writer, which the size catches unless it keeps it.
 */
async function checkObjects(target: RemoteTarget, objects: ObjectSource[], knownKeys: Set<string>) {
  const sizes = objects.length ? await target.sizes(objects.map((o) => objectKey(o.sha256))) : new Map();
  const sized = objects.filter((o) => sizes.get(objectKey(o.sha256)) === o.bytes);
  const hashes = target.hashes
    ? await target.hashes(sized.map((o) => ({ key: objectKey(o.sha256), bytes: o.bytes })))
    : null;
  const found: ObjectSource[] = [];
  const upload: ObjectSource[] = [];
  const repair: ObjectSource[] = [];
  for (const o of objects) {
    const key = objectKey(o.sha256);
    const whole = sizes.get(key) === o.bytes && (!hashes || hashes.get(key) === o.sha256);
    if (!whole) {
      upload.push(o);
      if (sizes.get(key) !== null && sizes.get(key) !== undefined) repair.push(o);
    } else if (!knownKeys.has(key)) found.push(o);
  }
  return { found, upload, repair };
}

export interface RollbackPlan {
  from: RemotePublication;
  to: KeptPublication;
  /**
   * `to` as it goes live again: the same bytes under a manifest of its own whose times are past every kept
   * publication's (rolledBackTimes), so that no client holding newer bytes is answered 304. It replaces `to` in
   * what the pointer keeps.
   */
  again: { entry: RemotePublication; storedManifest: Buffer };
  /** Objects of the publication rolled back to that the live one does not list: each is looked for first. */
  check: ObjectSource[];
  pointer: Pointer;
}

export async function planRollback(target: RemoteTarget, state: RemoteState, revision: string): Promise<RollbackPlan> {
  if (!state.pointer) throw new UsageError(`${target.description} holds no publication: there is nothing to roll back`);
  const live = state.pointer.live;
  const matches = state.kept.filter((k) => k.entry.publication.publicationRevision === revision);
  const to = matches.find((k) => publicationId(k.entry) !== publicationId(live)) ?? matches[0];
  if (!to) {
    const damaged = state.damaged.find((d) => d.entry.publication.publicationRevision === revision);
    if (damaged)
      throw new Error(`cannot roll back to ${revision}: its manifest cannot be read back (${damaged.error})`);
    const kept = keptOf(state.pointer).map((p) => p.publication.publicationRevision);
    throw new UsageError(
      `${target.description} keeps no publication of revision ${revision}; it keeps ${kept.join(', ')} ` +
        `(live: ${live.publication.publicationRevision})`,
    );
  }
  const liveKeys = objectKeysOf(
    state.kept.filter((k) => publicationId(k.entry) === publicationId(live)).map((k) => k.manifest),
  );
  const check = [...objectsOf(to.manifest).values()].filter((o) => !liveKeys.has(objectKey(o.sha256)));
  // The live manifest, if it reads back whole: else no body can keep its time. The pointer's publication times bound
  // the bodies of kept manifests that cannot be read (no body is later than its publication).
  const liveManifest = state.kept.find((k) => publicationId(k.entry) === publicationId(live))?.manifest ?? null;
  const again = rolledBackEntry(to, {
    live: liveManifest,
    others: state.kept.map((k) => k.manifest).filter((m) => m !== liveManifest),
    notBefore: keptOf(state.pointer).map((p) => p.publication.publishedAt),
  });
  // Nothing is dropped by a rollback: the publication it leaves stays kept, so a publish can roll forward again.
  const pointer: Pointer = {
    format: state.pointer.format,
    live: again.entry,
    previous: keptOf(state.pointer).filter(
      (p) => ![to.entry, again.entry].some((q) => publicationId(q) === publicationId(p)),
    ),
  };
  return { from: live, to, again, check, pointer };
}

/** A kept publication with its rolled-back times: its manifest as the remote stores it, and the pointer's entry. */
function rolledBackEntry(to: KeptPublication, kept: RemoteTimes): RollbackPlan['again'] {
  const manifest = rolledBackTimes(to.manifest, kept);
  const json = Buffer.from(JSON.stringify(manifest));
  const sha256 = sha256Hex(json);
  return {
    entry: {
      publication: { ...to.entry.publication, publishedAt: manifest.publishedAt, manifestSha256: sha256 },
      manifest: { sha256, bytes: json.length },
    },
    storedManifest: packManifest(json),
  };
}
