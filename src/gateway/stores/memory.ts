// `memory:`: one process, nothing survives it. For tests, and for trying the gateway without a database.
import {
  DuplicateKeyError,
  checkDay,
  checkTake,
  checkUnits,
  previousDay,
  type KeyRecord,
  type QuotaStore,
  type TakeResult,
} from './types.js';

export const DRIVER_NAME = 'memory';

export function memoryStore(): QuotaStore {
  const keys = new Map<string, KeyRecord>(); // by hash
  const ids = new Map<string, string>(); // id -> hash
  const counts = new Map<string, number>(); // `${day} ${keyId}` -> granted
  let latestDay = '';
  const slot = (keyId: string, day: string) => `${day} ${keyId}`;
  const copy = (r: KeyRecord): KeyRecord => ({ ...r });

  // Days older than yesterday are never asked for again: drop them when a new day first shows up.
  const prune = (day: string) => {
    if (day <= latestDay) return;
    latestDay = day;
    const keep = previousDay(day);
    for (const k of counts.keys()) if (k.slice(0, 10) < keep) counts.delete(k);
  };

  return {
    driver: DRIVER_NAME,
    async createKey(rec) {
      if (ids.has(rec.id) || keys.has(rec.hash)) throw new DuplicateKeyError(rec.id);
      keys.set(rec.hash, copy(rec));
      ids.set(rec.id, rec.hash);
    },
    async findKey(hash) {
      const r = keys.get(hash);
      return r ? copy(r) : null;
    },
    async listKeys() {
      return [...keys.values()]
        .map(copy)
        .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    },
    async revokeKey(id, at) {
      const hash = ids.get(id);
      const r = hash === undefined ? undefined : keys.get(hash);
      if (!r) return null;
      r.revoked_at ??= at;
      return copy(r);
    },
    async take(keyId, day, want, limit): Promise<TakeResult> {
      checkDay(day);
      checkTake(want, limit);
      prune(day);
      const before = counts.get(slot(keyId, day)) ?? 0;
      const taken = Math.max(0, Math.min(want, limit - before));
      if (taken > 0) counts.set(slot(keyId, day), before + taken);
      return { taken, granted: before + taken };
    },
    async ping() {},
    async release(keyId, day, units) {
      checkDay(day);
      checkUnits(units);
      const before = counts.get(slot(keyId, day));
      if (before !== undefined) counts.set(slot(keyId, day), Math.max(0, before - units));
    },
    async granted(keyId, day) {
      checkDay(day);
      return counts.get(slot(keyId, day)) ?? 0;
    },
    async close() {
      keys.clear();
      ids.clear();
      counts.clear();
    },
  };
}
