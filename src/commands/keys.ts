import { createKey } from '../gateway/keys.js';
import { openStore } from '../gateway/stores/index.js';

export async function keysCreate(o: { store: string; label: string }): Promise<void> {
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
  const store = await openStore(o.store);
  try {
    const keys = await store.listKeys();
    if (!keys.length) console.log('no keys');
    for (const k of keys) console.log(`${k.id}\t${k.label}\tcreated ${k.created_at}${k.revoked_at ? `\trevoked ${k.revoked_at}` : ''}`);
  } finally {
    await store.close();
  }
}

export async function keysRevoke(o: { store: string; id: string }): Promise<void> {
  const store = await openStore(o.store);
  try {
    const k = await store.revokeKey(o.id, new Date().toISOString());
    if (!k) throw new Error(`no key with id ${o.id}`);
    console.log(`revoked ${k.id} (${k.label})`);
  } finally {
    await store.close();
  }
}
