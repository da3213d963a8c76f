import { UsageError } from '../errors.js';
import { createKey, KEY_CACHE_TTL_MS, revokeKey } from '../gateway/keys.js';
import { openStore, redactUrl } from '../gateway/stores/index.js';

export async function keysCreate(o: { store: string; label: string }): Promise<void> {
  // A key made in memory: would vanish with this command, and could never be used.
  if (o.store === 'memory:')
    throw new UsageError(
      '--store memory: keeps keys for one process only, and this one ends now: use sqlite:PATH or redis://HOST:PORT.',
    );
  if (o.label.trim() === '') throw new UsageError('--label is empty: say who the key is for.');
  const store = await openStore(o.store);
  try {
    const { key, record } = await createKey(store, o.label);
    console.log(`created key ${record.id} (${record.label}); it is shown once, store it now:`);
    console.log(key); // alone on the last line, for scripts: KEY=$(modelpub keys create | tail -n1)
  } finally {
    await store.close();
  }
}

export async function keysList(o: { store: string }): Promise<void> {
  const store = await openStore(o.store, { mustExist: true });
  try {
    const keys = await store.listKeys();
    if (!keys.length) console.log('no keys');
    for (const k of keys)
      console.log(`${k.id}\t${k.label}\tcreated ${k.created_at}${k.revoked_at ? `\trevoked ${k.revoked_at}` : ''}`);
  } finally {
    await store.close();
  }
}

/**
 * Revokes the key named by its id or by the key itself. Never prints the argument: it may be a key, or a key mistyped.
 */
export async function keysRevoke(o: { store: string; idOrKey: string }): Promise<void> {
  const store = await openStore(o.store, { mustExist: true });
  try {
    const now = new Date();
    const k = await revokeKey(store, o.idOrKey, now);
    if (!k)
      throw new UsageError(
        `no key ${o.idOrKey.trim().startsWith('mp_') ? 'matches the key given' : `has the id ${o.idOrKey.trim()}`} in ` +
          `${redactUrl(o.store)} (\`modelpub keys list\` shows the ids)`,
      );
    console.log(
      k.revoked_at === now.toISOString()
        ? `revoked ${k.id} (${k.label}); running gateways refuse it within ${KEY_CACHE_TTL_MS / 1000} s (their key cache)`
        : `${k.id} (${k.label}) was already revoked at ${k.revoked_at}`,
    );
  } finally {
    await store.close();
  }
}
