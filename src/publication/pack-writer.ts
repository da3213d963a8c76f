// The representations (br and gzip) of a release's distinct bodies, gathered as its bodies are written and then
// written into its packs: reused from the previous release's packs, or compressed, held in memory or spilled to a file.
import { linkSync, readSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import path from 'node:path';
import { namedWriteError } from '../write-file.js';
import { Budget } from './budget.js';
import type { CompressionLevels, Compressor, Representations } from './compress.js';
import type { PackFile } from './files.js';
import { sha256Hex } from './integrity.js';
import { newPackName } from './layout.js';
import type { Made } from './made-body.js';
import { type PreviousPacks, type PreviousReadStats, previousPacksOf } from './previous-packs.js';
import type { IndexedRelease } from './release.js';
import { spillFile } from './spill-file.js';
import { Bytes, Column, RepresentationTable } from './tables.js';

export interface PackWriterOptions {
  stagingDir: string;
  revision: string;
  /** The live release the build continues from (writer.ts, WriteOptions.previous). */
  previous: IndexedRelease | null;
  /**
   * Makes the br and gzip representations of new distinct bodies. memoryBytes: what they may hold in memory before new
   * ones spill to a file (default MEMORY_BYTES).
   */
  compressor: { pool: Compressor; levels: CompressionLevels; memoryBytes?: number };
}

/** The figures the representation writer adds to a build's (WriteStats). */
export interface PackStats extends PreviousReadStats {
  /** Distinct bodies compressed by this build, and those whose representations were taken from the previous packs. */
  encodedNew: number;
  encodedReused: number;
  /** The previous release's packs linked into this one (the rest of their live representations were copied). */
  packsLinked: number;
}

/** Where a body's representations are until the pack is written (br, then gzip right after it). */
const HELD = 0; // in memory (`held`)
const SPILL = 1; // in the spill file
const PREVIOUS = 2; // in one of the previous release's packs

/**
 * Representations held in memory until the pack is written; past this, new ones go to a spill file (read back from
 * the page cache when the pack is written), so that memory stays bounded whatever the size of the publication (the
 * default data has 87 MB of them, 2,000 models 1.1 GB).
 */
const MEMORY_BYTES = 32 * 1024 * 1024;
/** The spill file, in the staging folder (removed before the switch). */
const SPILL_FILE = '.representations.unsorted';
/** The buffer finish() copies representations through into the pack. */
const PACK_BUFFER_BYTES = 4 * 1024 * 1024;
/** Compressions asked for and not yet written: past this many bytes of bodies, rendering waits for the pool. */
const MAX_ENCODING_BYTES = 32 * 1024 * 1024;

/**
 * Whether a previous pack is linked into the release (kept whole) or compacted (its live representations copied into
 * the new pack): linked while the representations the new release uses from it are at least half its bytes. So no
 * pack of a release is more than half garbage, and the packs of a release hold at most twice its representations' bytes;
 * and a byte is copied again only once as many bytes of its pack have died since it was written, so compaction
 * costs, over many rebuilds, no more than the representations they made.
 */
const linkPack = (liveBytes: number, packBytes: number): boolean => liveBytes > 0 && 2 * liveBytes >= packBytes;

/**
 * The representations of each distinct body, once: taken from the previous release's packs when it has them at the
 * same levels and the pack holding them is there with the size its manifest lists, else compressed by the pool while
 * rendering goes on (it waits only when the pool is MAX_ENCODING_BYTES behind). finish() links the previous packs
 * still used enough (linkPack) and writes the others' live representations and the new ones into a pack of its own.
 */
export function representationWriter(o: PackWriterOptions, stats: PackStats) {
  const { pool, levels, memoryBytes = MEMORY_BYTES } = o.compressor;
  // A row per distinct body, from when its representations are asked for; per row, where they are (HELD...), at which
  // offset there, and for PREVIOUS in which of the previous packs.
  const table = new RepresentationTable();
  const place = new Column(new Uint8Array(1024));
  const offsets = new Column(new Float64Array(1024));
  const fromPack = new Column(new Uint32Array(1024));
  const held = new Bytes(memoryBytes); // which it never grows past: room beyond would stay unused
  const pending = new Set<Promise<void>>();
  const encoding = new Budget(MAX_ENCODING_BYTES);
  let failure: Error | null = null;
  const previous = o.previous && previousPacksOf(o.previous, o.stagingDir, levels, stats);
  previous?.catch(() => {}); // thrown again where it is awaited
  const spill = spillFile(path.join(o.stagingDir, SPILL_FILE));
  const placeAt = (row: number, where: number, offset: number, pack = 0) => {
    place.values[row] = where;
    offsets.values[row] = offset;
    fromPack.values[row] = pack;
  };

  /** The row of `hash` in the previous table when its pack is sound, else -1. */
  const previousRow = (prev: PreviousPacks | null, hash: string): number => {
    const from = prev ? prev.table.rowOf(hash) : -1;
    return from >= 0 && prev!.sound[prev!.packOf[from]!] === 1 ? from : -1;
  };

  async function reuse(hash: string, row: number): Promise<boolean> {
    const prev = previous && (await previous);
    const from = previousRow(prev, hash);
    if (from < 0) return false;
    if (prev!.fetch && !(await prev!.fetch(from))) return false;
    table.set(row, prev!.table.at(from));
    placeAt(row, PREVIOUS, prev!.offsets[from]!, prev!.packOf[from]!);
    stats.encodedReused++;
    return true;
  }

  const listed = (r: Representations) => ({
    br: { sha256: r.br.sha256, bytes: r.br.size },
    gzip: { sha256: r.gzip.sha256, bytes: r.gzip.size },
  });
  /** Sets row `row` to the representations `r`, held in memory or spilled. */
  function keep(row: number, r: Representations): void {
    table.set(row, listed(r));
    const size = r.br.bytes.length + r.gzip.bytes.length;
    if (held.used + size <= memoryBytes) {
      held.reserve(size);
      placeAt(row, HELD, held.used);
      held.used += r.br.bytes.copy(held.buffer, held.used);
      held.used += r.gzip.bytes.copy(held.buffer, held.used);
    } else placeAt(row, SPILL, spill.append(r.br.bytes, r.gzip.bytes));
  }

  async function encode(row: number, body: Made, move: boolean): Promise<void> {
    const { whole } = body;
    keep(row, await (whole ? pool.compress(whole, { move }) : pool.compressStream(body.size, body.chunks())));
    stats.encodedNew++;
  }

  return {
    /** Whether a previous pack that is there holds the representations of `hash` (a carried body needs them). */
    async reusable(hash: string): Promise<boolean> {
      if (table.rowOf(hash) >= 0) return true;
      const prev = await previous;
      const from = previousRow(prev, hash);
      return from >= 0 && (!prev!.fetch || (await prev!.fetch(from)));
    },
    /**
     * The representations of `hash`: the previous pack's, else those of `body` (null: reusable() said yes). With
     * `move`, `body` may be moved to a compression thread (Compressor.compress): the caller is done with it.
     */
    async add(hash: string, body: Made | null, move = false): Promise<void> {
      if (table.rowOf(hash) >= 0 || failure) return;
      const row = table.start(hash);
      place.push(HELD);
      offsets.push(0);
      fromPack.push(0);
      if (await reuse(hash, row)) return;
      if (!body) throw new Error(`the representations of ${hash} are not in the previous pack`);
      // Begun only under the limit: a streamed body is compressed as its chunks are made, and two at once would
      // hold two bodies' br and gzip streams and outputs.
      const size = body.size;
      await encoding.take(size);
      const p: Promise<void> = encode(row, body, move)
        .catch((e: Error) => {
          failure ??= e;
        })
        .finally(() => {
          pending.delete(p);
          encoding.give(size);
        });
      pending.add(p);
      // And the caller goes on making bodies only while the pool is under the limit.
      await encoding.take(0);
    },
    /**
     * Links the previous packs kept (linkPack) into the staging folder and writes the new pack; returns each distinct
     * body's representations with their places and the release's packs. `bodyOf(hash)` reads an identity body back
     * from the staging folder: a representation found damaged while copied out of a compacted pack is made again.
     */
    async finish(bodyOf: (identity: string) => Promise<Buffer>): Promise<RepresentationTable> {
      while (pending.size) await Promise.all([...pending]);
      if (failure) throw failure;
      const prev = await previous;
      const sorted = table.sorted();
      // What each previous pack still serves; those kept are linked under their own name.
      const live = new Float64Array(prev?.files.length ?? 0);
      for (const row of sorted) if (place.values[row] === PREVIOUS) live[fromPack.values[row]!]! += table.bytesOf(row);
      const linked = new Uint8Array(live.length);
      for (let p = 0; p < live.length; p++) {
        if (!linkPack(live[p]!, prev!.files[p]!.bytes)) continue;
        const name = prev!.files[p]!.path;
        try {
          linkSync(path.join(prev!.dir, name), path.join(o.stagingDir, name));
          linked[p] = 1;
          stats.packsLinked++;
        } catch {} // copied instead (the file went away since it was checked)
      }
      const writes = sorted.filter((row) => place.values[row] !== PREVIOUS || !linked[fromPack.values[row]!]);
      const kept = prev ? prev.files.filter((_, p) => linked[p]).map((f) => f.path) : [];
      const name = newPackName(o.revision, new Set(kept));
      const names = (writes.length ? [...kept, name] : kept).sort();
      const index = new Map(names.map((n, i) => [n, i]));
      for (const row of sorted)
        if (place.values[row] === PREVIOUS && linked[fromPack.values[row]!])
          table.place(row, index.get(prev!.files[fromPack.values[row]!]!.path)!, offsets.values[row]!);
      const packs: PackFile[] = names.map((path) => ({ path, bytes: 0 }));
      for (const p of packs) if (p.path !== name) p.bytes = prev!.files.find((f) => f.path === p.path)!.bytes;
      table.packs = packs;
      if (!writes.length) return table;

      const newIndex = index.get(name)!;
      const spilled = await spill.reader();
      const handles = new Map<number, FileHandle>();
      const previousFile = async (p: number) => {
        let h = handles.get(p);
        if (!h) handles.set(p, (h = await open(path.join(prev!.dir, prev!.files[p]!.path), 'r')));
        return h;
      };
      const file = path.join(o.stagingDir, name);
      // 'wx': a new file, never one of the links (which are the previous release's files).
      const out = await open(file, 'wx').catch((e) => Promise.reject(namedWriteError(e, file)));
      let written = 0;
      try {
        let buffer = Buffer.allocUnsafe(PACK_BUFFER_BYTES);
        let used = 0;
        const flush = async () => {
          await out.write(buffer, 0, used).catch((e) => Promise.reject(namedWriteError(e, file)));
          stats.bytesWritten += used;
          used = 0;
        };
        /** The first of rows [i, next) of `writes`, read to buffer[at...], whose bytes are not those listed. */
        const firstDamaged = (i: number, next: number, at: number): number => {
          for (let k = i; k < next; k++) {
            const { br, gzip } = table.at(writes[k]!);
            const end = at + br.bytes + gzip.bytes;
            if (sha256Hex(buffer.subarray(at, at + br.bytes)) !== br.sha256) return k;
            if (sha256Hex(buffer.subarray(at + br.bytes, end)) !== gzip.sha256) return k;
            at = end;
          }
          return next;
        };
        /** Appends rows [i, next) of `writes`, which are at buffer[used...], to the pack. */
        const placed = (i: number, next: number) => {
          for (let k = i; k < next; k++) {
            table.place(writes[k]!, newIndex, written);
            written += table.bytesOf(writes[k]!);
            used += table.bytesOf(writes[k]!);
          }
        };
        for (let i = 0; i < writes.length; ) {
          const row = writes[i]!;
          const where = place.values[row]!;
          const at = offsets.values[row]!;
          let bytes = table.bytesOf(row);
          let next = i + 1;
          // Runs of rows end to end in one previous pack (a pack is in hash order, so most copied ones are) are copied
          // with one read each, not a read per body.
          if (where === PREVIOUS) {
            while (next < writes.length) {
              const r = writes[next]!;
              const n = table.bytesOf(r);
              const adjacent = place.values[r] === PREVIOUS && fromPack.values[r] === fromPack.values[row];
              if (!adjacent || offsets.values[r] !== at + bytes || bytes + n > PACK_BUFFER_BYTES) break;
              bytes += n;
              next++;
            }
          }
          if (used + bytes > buffer.length) await flush();
          if (bytes > buffer.length) buffer = Buffer.allocUnsafe(bytes);
          if (where === HELD) {
            held.buffer.copy(buffer, used, at, at + bytes);
            placed(i, next);
          } else if (where === SPILL) {
            // Synchronous: rows come in hash order, a read each, from the page cache. Through libuv's thread pool the
            // default data's 17,000 spilled rows took finish() 0.86 s; read here, 0.12 s.
            const bytesRead = readSync(spilled!.fd, buffer, used, bytes, at);
            if (bytesRead !== bytes)
              throw new Error(`the representations of ${table.identityOf(row)} were cut short while copied`);
            placed(i, next);
          } else {
            // Out of a compacted pack: checked as they are copied (the pack was only checked by its size), and one
            // whose bytes are not those listed is made again from its identity body, never inherited.
            const { bytesRead } = await (await previousFile(fromPack.values[row]!)).read(buffer, used, bytes, at);
            const good = bytesRead === bytes ? firstDamaged(i, next, used) : i;
            placed(i, good);
            if (good < next) {
              const bad = writes[good]!;
              const r = await pool.compress(await bodyOf(table.identityOf(bad)));
              table.set(bad, listed(r));
              stats.encodedReused--;
              stats.encodedNew++;
              const fresh = Buffer.concat([r.br.bytes, r.gzip.bytes]);
              if (used + fresh.length > buffer.length) await flush();
              if (fresh.length > buffer.length) buffer = Buffer.allocUnsafe(fresh.length);
              fresh.copy(buffer, used);
              table.place(bad, newIndex, written);
              written += fresh.length;
              used += fresh.length;
              next = good + 1;
            }
          }
          i = next;
        }
        await flush();
      } finally {
        await out.close();
        for (const h of handles.values()) await h.close();
      }
      packs[newIndex]!.bytes = written;
      return table;
    },
    /**
     * Closes and removes the spill file (and the downloaded previous packs, whose kept ones are linked); a build calls
     * it once the pack is written, or has failed.
     */
    async close(): Promise<void> {
      await spill.remove();
      await (await previous?.catch(() => null))?.close?.();
    },
  };
}
