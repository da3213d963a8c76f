// `npm start`: build the default publication if there is none or data/ changed, make a development key, serve on localhost.
import { UsageError } from '../errors.js';
import { createKey } from '../gateway/keys.js';
import { startGateway } from '../gateway/server.js';
import { openStore } from '../gateway/stores/index.js';
import { dataRevision, loadAndValidate } from '../pipeline/build.js';
import { liveRevision } from '../pipeline/previous.js';
import { buildCommand } from './build.js';
import { DEFAULT_STORE, gatewayOptions, untilSignal, type ServeCommandOptions } from './serve.js';

export async function devCommand(o: ServeCommandOptions & { data: string }): Promise<void> {
  // The key goes into the store the gateway opens: memory: would be another one, and the key would never work.
  if ((o.store ?? DEFAULT_STORE) === 'memory:')
    throw new UsageError(
      'npm start needs a store its key outlives: use sqlite:PATH (the default) or redis://HOST:PORT, not memory:',
    );
  if (o.origin)
    throw new UsageError(
      'npm start (modelpub dev) serves the build of --data in --dir; to serve a remote publication, run modelpub serve --origin',
    );
  const dir = o.dir ?? 'dist';
  // Built if there is no publication, or if the live one is not a build of the data as it is now (a maintainer who
  // edited data/ expects to see the edit): the revision a build would give the data is compared with the live one.
  // The build's messages about its folder name its own option, --out: say where that folder came from.
  const asDev = (e: unknown) =>
    e instanceof UsageError && e.message.includes('--out ')
      ? new UsageError(`modelpub dev (npm start) builds into --dir ${dir}, and ${e.message}`)
      : e;
  const live = await liveRevision(dir).catch((e: unknown) => {
    throw asDev(e);
  });
  const data = live === null ? undefined : await loadAndValidate(o.data);
  if (data === undefined || dataRevision(data) !== live) {
    console.log(
      live === null
        ? `no publication in ${dir}: building it from ${o.data}`
        : `the publication in ${dir} (${live}) is not a build of ${o.data} as it is now: building it again`,
    );
    await buildCommand({ data: o.data, out: dir, loaded: data }).catch((e: unknown) => {
      throw asDev(e);
    });
  }
  const stopped = untilSignal();
  const g = await startGateway(gatewayOptions({ ...o, dir }));
  // The key only once the gateway is up: a start that fails leaves no unused key in the store.
  let key: string;
  try {
    const store = await openStore(o.store ?? DEFAULT_STORE);
    key = (await createKey(store, 'development key (npm start)').finally(() => store.close())).key;
  } catch (e) {
    await g.close();
    throw e;
  }
  for (const line of g.warnings) console.error(`modelpub: warning: ${line}`);
  console.log(`listening on ${g.url}`);
  console.log(`development key: ${key}`);
  console.log(`try: curl -s -H 'x-api-key: ${key}' '${g.url}/api/v1/models?page_size=2&include=pricing'`);
  await stopped;
  await g.close();
}
