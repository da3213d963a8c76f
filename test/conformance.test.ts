// Acceptance: the black-box checker in ../shared/conformance against `modelpub serve` on the default publication,
// run through the real CLI (compiled lib/, as `npm test` compiles first), with a SQLite store and fresh keys; and
// issue 26's acceptance on that publication (catalog, filters).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tracked } from './helpers/children.js';

const root = path.resolve(import.meta.dirname, '..');
const checker = path.resolve(root, '../shared/conformance/check.mjs');
const cli = path.join(root, 'bin/modelpub.js');
const hasChecker = existsSync(checker);
if (!hasChecker) console.warn(`conformance checker not found at ${checker}: conformance test skipped`);

describe.skipIf(!hasChecker)('conformance checker against modelpub serve (default publication)', () => {
  let tmp: string;
  let server: ChildProcess | undefined;
  let url = '';
  const store = () => `sqlite:${path.join(tmp, 'gateway.db')}`;
  const newKey = () =>
    execFileSync('node', [cli, 'keys', 'create', '--store', store(), '--label', 'conformance'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .at(-1)!;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-conf-'));
    execFileSync(
      'node',
      [cli, 'build', '--data', path.join(root, 'data'), '--out', path.join(tmp, 'dist'), '--quiet'],
      { stdio: 'pipe' },
    );
    server = tracked(
      spawn(
        'node',
        [cli, 'serve', '--dir', path.join(tmp, 'dist'), '--port', '0', '--store', store(), '--log', 'silent'],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      ),
    );
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      server!.stdout!.on('data', (d: Buffer) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      server!.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
    });
  });
  afterAll(async () => {
    server?.kill('SIGTERM');
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('passes every check, the quota group included', () => {
    let out = '';
    let code = 0;
    try {
      out = execFileSync('node', [checker, '--base', url, '--key', newKey(), '--quota-key', newKey()], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      const err = e as { stdout: string; status: number };
      [out, code] = [err.stdout, err.status];
    }
    const failures = out.split('\n').filter((l) => l.startsWith('FAIL'));
    expect(failures).toEqual([]);
    expect(out.trim().split('\n').at(-1)).toMatch(/^\d+ passed, 0 failed$/);
    expect(code).toBe(0);
  });

  it('the figures README and docs/ state about the default publication are those of this build (scripts/check-doc-figures.mjs)', () => {
    let out = '';
    try {
      out = execFileSync('node', [path.join(root, 'scripts/check-doc-figures.mjs'), '--dist', path.join(tmp, 'dist')], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      out = (e as { stdout: string }).stdout;
      expect.fail(`docs disagree with the default build (update them with data/ changes):\n${out}`);
    }
    expect(out).toMatch(/^ok {3}README\.md:\d+ files: stated [\d,]+, the build has/m);
  });

  it('issue 26 on the default data: the catalog holds all 674 models of the default lane in each locale, each its detail with every include; a filter gives what the details say', async () => {
    const release = path.join(tmp, 'dist', 'current');
    const text = (rel: string) => readFileSync(path.join(release, rel), 'utf8');
    for (const locale of ['en', 'zh', 'ru']) {
      const raw = text(`api/v1/catalog/${locale}.verified.public.json`);
      const catalog = JSON.parse(raw) as { data: { models: { slug: string }[]; total: number } };
      expect(catalog.data.total).toBe(674);
      expect(catalog.data.models).toHaveLength(674);
      for (const { slug } of catalog.data.models) {
        const detail = text(`api/v1/models/${slug}/${locale}.verified.public.benchmarks+capabilities+pricing.json`);
        // The detail's data, byte for byte, is an entry of the catalog.
        expect(raw.includes(detail.slice(detail.indexOf(',"data":') + 8, -1)), slug).toBe(true);
      }
    }
    const key = newKey();
    const slugs: string[] = [];
    for (let page = 1; ; page++) {
      const r = await fetch(
        `${url}/api/v1/models?capabilities=input:image&developer=OpenAI&sort=alphabetical&page_size=20&page=${page}`,
        { headers: { 'x-api-key': key } },
      );
      const body = (await r.json()) as { data: { models: { slug: string }[]; pagination: { total_pages: number } } };
      slugs.push(...body.data.models.map((m) => m.slug));
      if (page >= body.data.pagination.total_pages) break;
    }
    const catalog = JSON.parse(text('api/v1/catalog/en.verified.public.json')) as {
      data: { models: { slug: string; name: string; developer: string; capabilities: { keys: string[] } }[] };
    };
    const expected = catalog.data.models
      .filter((m) => m.developer === 'OpenAI' && m.capabilities.keys.includes('input:image'))
      .sort((a, b) =>
        a.name.toLowerCase() < b.name.toLowerCase()
          ? -1
          : a.name.toLowerCase() > b.name.toLowerCase()
            ? 1
            : a.slug < b.slug
              ? -1
              : 1,
      )
      .map((m) => m.slug);
    expect(expected.length).toBeGreaterThan(20);
    expect(slugs).toEqual(expected);
  });

  it('issue 31 on the default data: the price card, offers, lifecycle, and provider=groq', async () => {
    const key = newKey();
    const get = async (p: string) => {
      const r = await fetch(`${url}${p}`, { headers: { 'x-api-key': key } });
      expect(r.status, p).toBe(200);
      return ((await r.json()) as { data: unknown }).data;
    };
    interface Offer {
      provider: string;
      tiers: unknown[];
      modes: Record<string, { input_price_per_million: number; output_price_per_million: number }>;
    }
    interface Detail {
      pricing: { cache_read_price_per_million: number; cache_write_price_per_million: number; offers: Offer[] };
      lifecycle: { status: string; dated_versions: string[] };
    }
    const detail = (slug: string, query = 'include=pricing') =>
      get(`/api/v1/models/${slug}?${query}`) as Promise<Detail>;
    const sonnet = (await detail('claude-sonnet-4-5-20250929')).pricing;
    expect([sonnet.cache_read_price_per_million, sonnet.cache_write_price_per_million]).toEqual([0.3, 3.75]);
    const google = (await detail('gemini-2-5-pro')).pricing.offers.find((o) => o.provider === 'google')!;
    expect(google.tiers).toContainEqual(
      expect.objectContaining({
        above_context_tokens: 200000,
        input_price_per_million: 2.5,
        output_price_per_million: 15,
      }),
    );
    const oss = (await detail('gpt-oss-120b')).pricing.offers;
    expect(oss).toHaveLength(30);
    expect(new Set(oss.map((o) => o.provider)).size).toBe(29);
    const opus = (await detail('claude-opus-4-7')).pricing.offers.find((o) => o.provider === 'anthropic')!;
    expect(opus.modes.fast).toMatchObject({ input_price_per_million: 30, output_price_per_million: 150 });
    expect((await detail('claude-3-haiku-20240307', '')).lifecycle.status).toBe('deprecated');
    expect((await detail('claude-opus-4-5', '')).lifecycle.dated_versions).toContain('claude-opus-4-5-20251101');

    // provider=groq: exactly the models of the lane with a groq offer, as the catalog's offers say.
    const catalog = JSON.parse(
      readFileSync(path.join(tmp, 'dist', 'current', 'api/v1/catalog/en.verified.public.json'), 'utf8'),
    ) as { data: { models: { slug: string; pricing: { offers: Offer[] } | null }[] } };
    const withGroq = catalog.data.models
      .filter((m) => m.pricing?.offers.some((o) => o.provider === 'groq'))
      .map((m) => m.slug)
      .sort();
    expect(withGroq.length).toBeGreaterThan(3);
    const list = (await get('/api/v1/models?provider=groq&page_size=100')) as { models: { slug: string }[] };
    expect(list.models.map((m) => m.slug).sort()).toEqual(withGroq);
  });
});
