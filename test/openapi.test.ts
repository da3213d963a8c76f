// The OpenAPI document (src/schema/openapi.ts): a real OpenAPI 3.1 validator passes it, real responses of a fixture
// publication validate against its schemas, and a client generated from it by openapi-typescript type-checks and runs
// against the gateway.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ValidateFunction } from 'ajv';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../src/gateway/keys.js';
import type { Gateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { build } from '../src/pipeline/build.js';
import { Stats } from '../src/schema/api.js';
import { QUERY_PARAMETERS } from '../src/schema/requests.js';
import { model, smallCatalog, writeFixture } from './helpers/fixture.js';
import { gatewayOver, listen, request } from './helpers/request.js';
import { ajvErrors, createAjv } from './helpers/schemas.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

let tmp: string;
let gw: Gateway;
let store: QuotaStore;
let key: string;
let doc: Record<string, unknown>;

const get = (p: string, headers: Record<string, string> = {}) =>
  request(gw, p, { headers: { 'x-api-key': key, ...headers } });

/** Ajv with the document added: each component schema compiled by its JSON pointer in it. */
function validators(): (name: string) => ValidateFunction {
  const ajv = createAjv();
  ajv.opts.strictSchema = false; // the document's own keys (openapi, info, paths) are not JSON Schema keywords
  ajv.addSchema(doc, 'openapi.json');
  return (name) => ajv.getSchema(`openapi.json#/components/schemas/${name}`)!;
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-openapi-'));
  const spec = smallCatalog();
  const image = { ...(spec.models![0]!.capabilities as object), input: ['text', 'image'] };
  spec.models!.push(
    model('vision-one', 21, { developer: 'OpenAI', capabilities: image }),
    model('vision-two', 22, { developer: 'OpenAI', capabilities: image, name: 'Vision Two' }),
    model('text-one', 23, { developer: 'OpenAI' }),
  );
  await writeFixture(path.join(tmp, 'data'), spec);
  await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'dist') });
  store = await openStore('memory:');
  key = (await createKey(store, 'openapi')).key;
  gw = await gatewayOver(path.join(tmp, 'dist'), {
    storeInstance: store,
    quota: 1000,
    cacheBytes: 1 << 22,
    pollMs: 1000,
  });
  // As a client gets it: from the gateway, without a key.
  const r = await request(gw, `/api/v1/openapi.json`);
  expect(r.status).toBe(200);
  doc = (await r.json()) as Record<string, unknown>;
  await writeFile(path.join(tmp, 'openapi.json'), JSON.stringify(doc, null, 2));
});
afterAll(async () => {
  await gw?.close();
  await store?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('OpenAPI document', () => {
  it('passes Redocly lint (recommended rules, examples checked against their schemas) without a problem', async () => {
    const { stdout } = await run(bin('redocly'), ['lint', path.join(tmp, 'openapi.json'), '--format=json'], {
      cwd: tmp,
    }).catch((e: { stdout: string }) => e);
    const report = JSON.parse(stdout) as { problems: { ruleId: string; message: string; location: unknown }[] };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message} ${JSON.stringify(p.location)}`)).toEqual([]);
  });

  it('is self-contained and names every operation, parameter, header and error code', async () => {
    const text = JSON.stringify(doc);
    for (const m of text.matchAll(/"\$ref":"([^"]+)"/g)) expect(m[1]).toMatch(/^#\/components\//);
    const paths = doc.paths as Record<string, { get: { operationId: string } }>;
    expect(Object.keys(paths)).toEqual([
      '/api/v1/models',
      '/api/v1/models/{slug}',
      '/api/v1/models/{slug}/prices',
      '/api/v1/prices',
      '/api/v1/metrics',
      '/api/v1/catalog',
      '/api/v1/changes',
      '/api/v1/openapi.json',
    ]);
    const components = doc.components as Record<string, Record<string, Record<string, unknown>>>;
    expect(Object.keys(components.parameters!)).toEqual(
      expect.arrayContaining(['capabilities', 'developer', 'min_context_window', 'max_blended_price', 'open_weights']),
    );
    // One text: each parameter's and field's description is its zod schema's .describe().
    for (const [name, p] of Object.entries(components.parameters!))
      expect(p.description, name).toBe(QUERY_PARAMETERS[name as keyof typeof QUERY_PARAMETERS].description);
    const stats = components.schemas!.Stats as { properties: Record<string, { description?: string }> };
    expect(stats.properties.total_tests!.description).toBe(Stats.shape.total_tests.description);
    expect(Stats.shape.total_tests.description).toMatch(/test run/);
    // The publication's developers (lane all's), as the filter takes them.
    expect(components.parameters!.developer).toMatchObject({ schema: { items: { enum: ['Lab', 'OpenAI'] } } });
    // Real examples of this publication: the default list at page_size=2 is what the gateway answers for it.
    const example = (p: string, name: string) =>
      (
        paths[p] as unknown as {
          get: {
            responses: Record<string, { content: Record<string, { examples: Record<string, { value: unknown }> }> }>;
          };
        }
      ).get.responses['200']!.content['application/json']!.examples[name]!.value as { publicationRevision: string };
    for (const [p, name, real] of [
      ['/api/v1/models', 'first_page', '/api/v1/models?page_size=2'],
      ['/api/v1/models/{slug}', 'detail', '/api/v1/models/alpha'],
    ] as const) {
      const answer = (await (await get(real)).json()) as { publicationRevision: string };
      expect({ ...example(p, name), publicationRevision: answer.publicationRevision }, real).toEqual(answer);
    }
    expect(Object.keys(example('/api/v1/catalog', 'catalog'))).toEqual([
      'schemaVersion',
      'publicationRevision',
      'tier',
      'locale',
      'attribution',
      'data',
    ]);
    expect(doc['x-publication-revision']).toBe(gw.publication().revision);
    expect(Object.keys(components.headers!)).toEqual(
      expect.arrayContaining([
        'ETag',
        'Last-Modified',
        'RateLimit',
        'RateLimit-Policy',
        'Retry-After',
        'X-Publication-Revision',
      ]),
    );
    for (const code of [
      'invalid_parameter',
      'bad_request',
      'missing_api_key',
      'invalid_api_key',
      'not_found',
      'resync_required',
      'method_not_allowed',
      'request_timeout',
      'uri_too_long',
      'headers_too_large',
      'quota_exceeded',
      'unavailable',
      'too_many_pipelined',
    ])
      expect(text, code).toContain(`"code":"${code}"`);
    expect(components.securitySchemes!.keyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
  });

  it('validates real list, detail and problem answers of the gateway against its schemas', async () => {
    const schema = validators();
    const list = schema('ListResponse');
    const detail = schema('DetailResponse');
    const problem = schema('Problem');
    let checked = 0;
    const metrics = schema('MetricsResponse');
    const catalog = schema('CatalogResponse');
    const changes = schema('ChangesResponse');
    const feed = await (await get('/api/v1/changes')).json();
    expect(changes(feed), ajvErrors(changes)).toBe(true);
    expect(changes({ ...feed, data: { ...feed.data, latest: undefined } })).toBe(false);
    for (const q of ['', '?locale=zh']) {
      const body = await (await get(`/api/v1/metrics${q}`)).json();
      expect(metrics(body), ajvErrors(metrics)).toBe(true);
    }
    for (const q of ['', '?lane=all&includeDisplayOnly=true&locale=ru']) {
      const body = await (await get(`/api/v1/catalog${q}`)).json();
      expect(catalog(body), ajvErrors(catalog)).toBe(true);
    }
    for (const q of [
      '',
      '?include=benchmarks,capabilities,pricing&locale=zh',
      '?lane=all&includeDisplayOnly=true&page_size=3&page=2',
      '?q=vision&capabilities=input:image&developer=OpenAI&include=capabilities',
      '?sort=newest&page=99',
    ]) {
      const body = await (await get(`/api/v1/models${q}`)).json();
      expect(list(body), `${q}: ${ajvErrors(list)}`).toBe(true);
      for (const m of (body as { data: { models: { slug: string }[] } }).data.models.slice(0, 3)) {
        for (const dq of [
          '',
          '?include=benchmarks,capabilities,pricing&locale=ru',
          '?lane=all&includeDisplayOnly=true',
        ]) {
          const d = await (await get(`/api/v1/models/${m.slug}${dq}`)).json();
          expect(detail(d), `${m.slug}${dq}: ${ajvErrors(detail)}`).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
    // Schemas that accept anything would pass the above: they refuse a body with a field too many, or one missing.
    const body = (await (await get('/api/v1/models/alpha')).json()) as { data: Record<string, unknown> };
    expect(detail({ ...body, data: { ...body.data, secret: 1 } })).toBe(false);
    const { slug: _slug, ...noSlug } = body.data;
    expect(detail({ ...body, data: noSlug })).toBe(false);
    // Problems, and the document's examples of them are what the gateway sends.
    const examplesOf = (name: string) =>
      (
        doc.components as Record<
          string,
          Record<string, { content: Record<string, { examples: Record<string, { value: unknown }> }> }>
        >
      ).responses![name]!.content['application/problem+json']!.examples;
    for (const [p, headers, name, example] of [
      ['/api/v1/models?developr=OpenAI', {}, 'BadRequest', 'unknown_parameter'],
      ['/api/v1/models?capabilities=input:telepathy', {}, 'BadRequest', 'unknown_capability'],
      ['/api/v1/models?page_size=500', {}, 'BadRequest', 'page_size'],
      ['/api/v1/models', { 'x-api-key': '' }, 'Unauthorized', 'no_key'],
      ['/api/v1/models', { 'x-api-key': 'mp_nope' }, 'Unauthorized', 'unknown_key'],
    ] as const) {
      const r = await get(p, headers);
      const b = await r.json();
      expect(problem(b), `${p}: ${ajvErrors(problem)}`).toBe(true);
      expect(b, p).toEqual(examplesOf(name)[example]!.value);
    }
    const notFound = await (await get('/api/v1/models/no-such-model')).json();
    expect(problem(notFound), ajvErrors(problem)).toBe(true);
  });

  it('generates a client with openapi-typescript whose program type-checks (tsc) and runs against the gateway', async () => {
    const dir = path.join(tmp, 'client');
    await mkdir(dir, { recursive: true });
    const types = astToString(await openapiTS(doc as unknown as Parameters<typeof openapiTS>[0]));
    await writeFile(path.join(dir, 'api.d.ts'), types);
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noUncheckedIndexedAccess: true,
          outDir: 'out',
          types: ['node'],
          typeRoots: [path.join(root, 'node_modules', '@types')],
        },
        files: ['client.mts', 'api.d.ts'],
      }),
    );
    await writeFile(
      path.join(dir, 'client.mts'),
      `import type { components, paths } from './api.js';

type ListQuery = NonNullable<paths['/api/v1/models']['get']['parameters']['query']>;
type ListOk = paths['/api/v1/models']['get']['responses']['200']['content']['application/json'];
type DetailOk = paths['/api/v1/models/{slug}']['get']['responses']['200']['content']['application/json'];
type Problem = components['schemas']['Problem'];

const [base, key] = process.argv.slice(2) as [string, string];
const headers = { 'x-api-key': key };

/** Query parameters as the API takes them: a list as one comma-separated value. */
function search(q: ListQuery): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, Array.isArray(v) ? v.join(',') : String(v));
  return p.toString();
}

// @ts-expect-error: the generated types know the sort orders
const wrong: ListQuery = { sort: 'best' };
void wrong;

const query: ListQuery = {
  capabilities: ['input:image'],
  developer: ['OpenAI'],
  sort: 'alphabetical',
  page_size: 1,
  include: ['capabilities'],
};
const slugs: string[] = [];
let total = 0;
for (let page = 1; ; page++) {
  const r = await fetch(\`\${base}/api/v1/models?\${search({ ...query, page })}\`, { headers });
  if (!r.ok) throw new Error(((await r.json()) as Problem).detail);
  const list = (await r.json()) as ListOk;
  total = list.data.pagination.total;
  slugs.push(...list.data.models.map((m) => m.slug));
  if (page >= list.data.pagination.total_pages) break;
}
const first = slugs[0];
if (first === undefined) throw new Error('no model');
const r = await fetch(\`\${base}/api/v1/models/\${first}?include=capabilities,pricing\`, { headers });
const detail = (await r.json()) as DetailOk;
const keys: components['schemas']['CapabilityKey'][] = detail.data.capabilities?.keys ?? [];
const blended: number | null = detail.data.pricing_summary?.blended_price_per_million ?? null;
console.log(JSON.stringify({ total, slugs, developer: detail.data.developer, keys, blended }));
`,
    );
    await run(bin('tsc'), ['-p', path.join(dir, 'tsconfig.json')], { cwd: dir }).catch(
      (e: { stdout: string; message: string }) => {
        throw new Error(`tsc failed on the generated client: ${e.stdout || e.message}`);
      },
    );
    const served = await listen(gw); // the generated client runs in a process of its own
    try {
      const { stdout } = await run(process.execPath, [path.join(dir, 'out', 'client.mjs'), served.url, key]);
      expect(JSON.parse(stdout)).toEqual({
        total: 2,
        slugs: ['vision-two', 'vision-one'], // by name: 'vision two' before 'vision-one'
        developer: 'OpenAI',
        keys: ['input:image', 'input:text', 'output:text', 'temperature', 'tool_use'],
        blended: null,
      });
    } finally {
      await served.close();
    }
  });
});
