// Request canonicalization (src/routes.ts): what the gateway accepts, how it names the prebuilt file, and what it refuses.
import { describe, expect, it } from 'vitest';
import {
  INCLUDE_SUBSETS,
  changesFile,
  detailFile,
  fileFor,
  listFile,
  OPENAPI_FILE,
} from '../src/publication/layout.js';
import { MAX_INVALID_PARAMS, problemBody } from '../src/schema/problems.js';
import {
  parseRequest,
  routeOf,
  type ApiRequest,
  type DetailRequest,
  type ListRequest,
  type OpenRequest,
  type ParseResult,
} from '../src/schema/requests.js';

const LIST = '/api/v1/models';
const parse = (pathname: string, query = '') => parseRequest(pathname, new URLSearchParams(query));
const okAny = (pathname: string, query = ''): ApiRequest | OpenRequest => {
  const r = parse(pathname, query);
  if (!r.ok) throw new Error(`expected ${pathname}?${query} to parse, got ${JSON.stringify(r)}`);
  return r.request;
};
/** A list or detail request (most tests here). */
const ok = (pathname: string, query = '') => okAny(pathname, query) as ListRequest | DetailRequest;
const invalid = (pathname: string, query: string) => {
  const r: ParseResult = parse(pathname, query);
  if (r.ok || r.status !== 400) throw new Error(`expected 400 for ${pathname}?${query}, got ${JSON.stringify(r)}`);
  return r.invalid;
};

describe('defaults', () => {
  it('list: page 1 of 50, popular, en, verified, public, no include, no query', () => {
    expect(ok(LIST)).toEqual({
      kind: 'list',
      locale: 'en',
      lane: 'verified',
      displayOnly: false,
      include: [],
      sort: 'popular',
      page: 1,
      pageSize: 50,
      q: null,
      filter: null,
    });
  });
  it('detail: en, verified, public, no include', () => {
    expect(ok(`${LIST}/gpt-4o`)).toEqual({
      kind: 'detail',
      slug: 'gpt-4o',
      locale: 'en',
      lane: 'verified',
      displayOnly: false,
      include: [],
    });
  });
  it('explicit defaults give the same request as none', () => {
    expect(
      ok(LIST, 'page=1&page_size=50&sort=popular&locale=en&lane=verified&includeDisplayOnly=false&include='),
    ).toEqual(ok(LIST));
    expect(ok(`${LIST}/a`, 'locale=en&lane=verified&includeDisplayOnly=false')).toEqual(ok(`${LIST}/a`));
  });
  it('every value is taken as given', () => {
    expect(
      ok(
        LIST,
        'q=claude&page=3&page_size=100&sort=alphabetical&locale=zh&lane=all&includeDisplayOnly=true&include=pricing',
      ),
    ).toEqual({
      kind: 'list',
      locale: 'zh',
      lane: 'all',
      displayOnly: true,
      include: ['pricing'],
      sort: 'alphabetical',
      page: 3,
      pageSize: 100,
      q: 'claude',
      filter: null,
    });
  });
});

describe('include', () => {
  const perms = (xs: string[]): string[][] =>
    xs.length <= 1 ? [xs] : xs.flatMap((x, i) => perms([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
  it('every permutation of the three gives the canonical sorted order (and so one file)', () => {
    const all = perms(['pricing', 'benchmarks', 'capabilities']);
    expect(all).toHaveLength(6);
    for (const p of all) {
      const r = ok(`${LIST}/a`, `include=${p.join(',')}`);
      expect(r.include).toEqual(['benchmarks', 'capabilities', 'pricing']);
      expect(detailFile(r as Extract<ApiRequest, { kind: 'detail' }>)).toBe(
        'api/v1/models/a/en.verified.public.benchmarks+capabilities+pricing.json',
      );
    }
  });
  it('pairs and repeats are canonicalized too', () => {
    expect(ok(LIST, 'include=pricing,benchmarks').include).toEqual(['benchmarks', 'pricing']);
    expect(ok(LIST, 'include=pricing,pricing').include).toEqual(['pricing']);
    expect(ok(LIST, 'include=capabilities,benchmarks,capabilities').include).toEqual(['benchmarks', 'capabilities']);
    expect(ok(LIST, 'include=').include).toEqual([]);
  });
  it('unknown values, wrong case, spaces and empty parts are rejected, naming include', () => {
    expect(invalid(LIST, 'include=prices')).toEqual([
      { name: 'include', reason: '"prices" is not one of benchmarks, capabilities, pricing' },
    ]);
    expect(invalid(LIST, 'include=Pricing')).toEqual([
      { name: 'include', reason: '"Pricing" is not one of benchmarks, capabilities, pricing' },
    ]);
    expect(invalid(LIST, 'include=pricing, benchmarks')).toEqual([
      { name: 'include', reason: '" benchmarks" is not one of benchmarks, capabilities, pricing' },
    ]);
    expect(invalid(LIST, 'include=pricing,')).toEqual([
      { name: 'include', reason: '"" is not one of benchmarks, capabilities, pricing' },
    ]);
  });
  it('INCLUDE_SUBSETS holds the 8 canonical subsets once each', () => {
    expect(INCLUDE_SUBSETS.map((s) => s.join('+'))).toEqual([
      '',
      'benchmarks',
      'capabilities',
      'benchmarks+capabilities',
      'pricing',
      'benchmarks+pricing',
      'capabilities+pricing',
      'benchmarks+capabilities+pricing',
    ]);
  });
});

describe('page and page_size', () => {
  it('accepts the bounds 1 and 100', () => {
    expect((ok(LIST, 'page_size=1') as ListRequest).pageSize).toBe(1);
    expect((ok(LIST, 'page_size=100') as ListRequest).pageSize).toBe(100);
    expect((ok(LIST, 'page=1000000') as ListRequest).page).toBe(1_000_000);
  });
  it.each([
    ['0', 'must be at least 1'],
    ['101', 'must be at most 100'],
    ['abc', 'must be a whole number from 1 to 100'],
    ['1.5', 'must be a whole number from 1 to 100'],
    ['-1', 'must be a whole number from 1 to 100'],
    ['', 'must be a whole number from 1 to 100'],
    ['1e2', 'must be a whole number from 1 to 100'],
    [' 5', 'must be a whole number from 1 to 100'],
    ['9999999999', 'must be a whole number from 1 to 100'],
  ])('page_size=%j is rejected: %s', (v, reason) => {
    expect(invalid(LIST, `page_size=${encodeURIComponent(v)}`)).toEqual([{ name: 'page_size', reason }]);
  });
  it('page 0, a fraction and a page past the limit are rejected, naming page', () => {
    expect(invalid(LIST, 'page=0')).toEqual([{ name: 'page', reason: 'must be at least 1' }]);
    expect(invalid(LIST, 'page=2.0')).toEqual([{ name: 'page', reason: 'must be a whole number from 1 to 1000000' }]);
    expect(invalid(LIST, 'page=1000001')).toEqual([{ name: 'page', reason: 'must be at most 1000000' }]);
  });
  it('several bad parameters are reported together', () => {
    expect(invalid(LIST, 'page_size=0&lane=x&sort=best&locale=de')).toEqual([
      { name: 'locale', reason: 'must be one of en, zh, ru' },
      { name: 'lane', reason: 'must be one of verified, provisional, all' },
      { name: 'sort', reason: 'must be one of popular, recent, newest, alphabetical' },
      { name: 'page_size', reason: 'must be at least 1' },
    ]);
  });
});

describe('repeated and unknown parameters', () => {
  it('a known parameter given twice is rejected, even with the same value', () => {
    expect(invalid(LIST, 'page=1&page=2')).toEqual([{ name: 'page', reason: 'given more than once; send it once' }]);
    expect(invalid(LIST, 'locale=en&locale=en')).toEqual([
      { name: 'locale', reason: 'given more than once; send it once' },
    ]);
    expect(invalid(LIST, 'sort=newest&sort=newest&q=a&q=b')).toEqual([
      { name: 'sort', reason: 'given more than once; send it once' },
      { name: 'q', reason: 'given more than once; send it once' },
    ]);
    expect(invalid(LIST, 'open_weights=true&open_weights=false')).toEqual([
      { name: 'open_weights', reason: 'given more than once; send it once' },
    ]);
  });
  it('a list-valued parameter given repeatedly (openapi-fetch, URLSearchParams.append) is its comma list', () => {
    for (const path of [LIST, `${LIST}/a`])
      expect(ok(path, 'include=pricing&include=benchmarks')).toEqual(ok(path, 'include=benchmarks,pricing'));
    expect(ok(LIST, 'include=pricing&include=&include=pricing')).toEqual(ok(LIST, 'include=pricing'));
    expect(ok(LIST, 'include=&include=')).toEqual(ok(LIST));
    expect(ok(LIST, 'developer=OpenAI&developer=Anthropic&capabilities=tool_use&input_modalities=image')).toEqual(
      ok(LIST, 'developer=Anthropic,OpenAI&capabilities=input:image,tool_use'),
    );
    // Each piece is checked as a part of the list would be, and the bad part named.
    expect(invalid(LIST, 'include=pricing&include=price')).toEqual([
      { name: 'include', reason: '"price" is not one of benchmarks, capabilities, pricing' },
    ]);
    expect(invalid(LIST, 'developer=OpenAI,&developer=Anthropic')).toEqual([
      { name: 'developer', reason: 'an empty item (two commas, or one at an end)' },
    ]);
  });
  it('a known parameter in the bracketed array form (axios include[], qs include[0]) is rejected, not ignored', () => {
    expect(invalid(LIST, 'include[]=pricing&include[]=benchmarks')).toEqual([
      {
        name: 'include[]',
        reason: 'not a parameter; send include once, as a comma-separated list (include=benchmarks,pricing)',
      },
    ]);
    expect(invalid(`${LIST}/a`, 'locale[]=zh')).toEqual([
      { name: 'locale[]', reason: 'not a parameter; send locale once' },
    ]);
    expect(invalid(LIST, 'page[]=2')).toEqual([{ name: 'page[]', reason: 'not a parameter; send page once' }]);
    // qs writes arrays with indices by default (include%5B0%5D=pricing&include%5B1%5D=benchmarks): named once.
    expect(invalid(LIST, 'include%5B0%5D=pricing&include%5B1%5D=benchmarks')).toEqual([
      {
        name: 'include[0]',
        reason: 'not a parameter; send include once, as a comma-separated list (include=benchmarks,pricing)',
      },
    ]);
    // Other bracketed names are unknown parameters like any other.
    expect(invalid(LIST, 'filter[]=x')).toEqual([
      { name: 'filter[]', reason: expect.stringMatching(/^not a parameter of this operation; accepted: q, page, /) },
    ]);
    expect(invalid(LIST, 'capabilities[]=tool_use')).toEqual([
      {
        name: 'capabilities[]',
        reason:
          'not a parameter; send capabilities once, as a comma-separated list (capabilities=input:image,tool_use)',
      },
    ]);
  });
  it('unknown parameters are rejected, naming each once and the accepted ones (cache-busters too)', () => {
    const accepted =
      'accepted: q, page, page_size, sort, locale, include, lane, includeDisplayOnly, capabilities, input_modalities, ' +
      'output_modalities, developer, min_context_window, min_output_tokens, max_blended_price, open_weights, provider, ' +
      'status, exclude_snapshots';
    expect(invalid(LIST, 'utm_source=x&_=1&_=2')).toEqual([
      { name: 'utm_source', reason: `not a parameter of this operation; ${accepted}` },
      { name: '_', reason: `not a parameter of this operation; ${accepted}` },
    ]);
    // A misspelling of a known name says which it resembles.
    expect(invalid(LIST, 'developr=OpenAI')).toEqual([
      { name: 'developr', reason: `not a parameter of this operation (did you mean developer?); ${accepted}` },
    ]);
    expect(invalid(LIST, 'pagesize=5')[0]!.reason).toContain('(did you mean page_size?)');
    expect(invalid(LIST, 'PAGE=7')[0]!.reason).toContain('(did you mean page?)'); // names are case-sensitive
    expect(invalid(LIST, 'sot=new')[0]!.reason).not.toContain('did you mean'); // too short to guess
    expect(invalid(LIST, 'includedisplayonly=true')[0]!.reason).toContain('(did you mean includeDisplayOnly?)');
    // A long name is cut in the answer.
    expect(invalid(LIST, `${'x'.repeat(500)}=1`)[0]!.name).toBe('x'.repeat(40));
  });
  it('list parameters on a detail request are rejected, saying they belong to the list', () => {
    expect(invalid(`${LIST}/a`, 'page=2&developer=OpenAI&q[]=x')).toEqual([
      {
        name: 'page',
        reason:
          "a parameter of the list (GET /api/v1/models), not of a model's detail; accepted: locale, include, lane, includeDisplayOnly",
      },
      {
        name: 'developer',
        reason:
          "a parameter of the list (GET /api/v1/models), not of a model's detail; accepted: locale, include, lane, includeDisplayOnly",
      },
      { name: 'q[]', reason: 'not a parameter of this operation; accepted: locale, include, lane, includeDisplayOnly' },
    ]);
  });
});

describe('filters', () => {
  const filterOf = (query: string) => (ok(LIST, query) as ListRequest).filter;
  const none = {
    capabilities: [],
    developer: [],
    min_context_window: null,
    min_output_tokens: null,
    max_blended_price: null,
    open_weights: null,
    provider: [],
    status: [],
    exclude_snapshots: false,
  };
  it('are canonical: lists sorted and unique, modalities folded into capability keys', () => {
    expect(filterOf('capabilities=tool_use,input:image,tool_use&developer=OpenAI,Anthropic,OpenAI')).toEqual({
      ...none,
      capabilities: ['input:image', 'tool_use'],
      developer: ['Anthropic', 'OpenAI'],
    });
    expect(filterOf('input_modalities=image&output_modalities=text,audio')).toEqual({
      ...none,
      capabilities: ['input:image', 'output:audio', 'output:text'],
    });
    expect(filterOf('input_modalities=image')).toEqual(filterOf('capabilities=input:image'));
    expect(filterOf('min_context_window=128000&min_output_tokens=0&max_blended_price=2.50&open_weights=true')).toEqual({
      ...none,
      min_context_window: 128000,
      min_output_tokens: 0,
      max_blended_price: 2.5,
      open_weights: true,
    });
    expect(filterOf('developer=Alibaba%20(Qwen),Z.ai')).toEqual({ ...none, developer: ['Alibaba (Qwen)', 'Z.ai'] });
    expect(filterOf('provider=groq,amazon-bedrock,groq&status=deprecated,active&exclude_snapshots=true')).toEqual({
      ...none,
      provider: ['amazon-bedrock', 'groq'],
      status: ['active', 'deprecated'],
      exclude_snapshots: true,
    });
    expect(filterOf('provider=groq&provider=cerebras')).toEqual({ ...none, provider: ['cerebras', 'groq'] });
    // false is no filter: the prebuilt list answers.
    expect(filterOf('exclude_snapshots=false&status=&provider=')).toBeNull();
  });
  it('provider ids and statuses are checked for form; whether a provider exists, by the gateway', () => {
    expect(invalid(LIST, 'provider=Groq')).toEqual([
      {
        name: 'provider',
        reason: '"Groq" is not a provider id (lowercase letters, digits, ".", "_" and "-", as in an offer\'s provider)',
      },
    ]);
    expect(invalid(LIST, 'status=current&exclude_snapshots=1')).toEqual([
      { name: 'status', reason: '"current" is not a lifecycle status; one of active, beta, deprecated, retired' },
      { name: 'exclude_snapshots', reason: 'must be true or false' },
    ]);
    expect(invalid(LIST, 'exclude_snapshots=true&exclude_snapshots=true')).toEqual([
      { name: 'exclude_snapshots', reason: 'given more than once; send it once' },
    ]);
  });
  it('empty lists are no filter, and a request without any has none', () => {
    expect(filterOf('capabilities=&developer=&input_modalities=')).toBeNull();
    expect(filterOf('')).toBeNull();
    expect(filterOf('open_weights=false')).toEqual({ ...none, open_weights: false });
  });
  it('empty numbers and booleans are no filter either (docs/api.md): the prebuilt list answers', () => {
    const q = 'min_context_window=&min_output_tokens=&max_blended_price=&open_weights=';
    expect(filterOf(q)).toBeNull();
    expect(fileFor(ok(LIST, q), { pageSizes: [50], pages: () => 3 })).toEqual(
      fileFor(ok(LIST, ''), { pageSizes: [50], pages: () => 3 }),
    );
    expect(filterOf('min_output_tokens=&open_weights=true')).toEqual({ ...none, open_weights: true });
  });
  it('unknown capability keys and modalities are rejected, naming the value and the allowed ones', () => {
    expect(invalid(LIST, 'capabilities=input:image,input:telepathy')).toEqual([
      {
        name: 'capabilities',
        reason:
          '"input:telepathy" is not a capability key; one of attachments, input:audio, input:image, input:pdf, input:text, input:video, open_weights, output:audio, output:image, output:pdf, output:text, output:video, reasoning, structured_output, temperature, tool_use',
      },
    ]);
    expect(invalid(LIST, 'capabilities=Tool_Use')[0]!.reason).toMatch(/^"Tool_Use" is not a capability key; one of /);
    expect(invalid(LIST, 'input_modalities=smell')).toEqual([
      { name: 'input_modalities', reason: '"smell" is not a modality; one of text, image, audio, video, pdf' },
    ]);
    expect(invalid(LIST, 'capabilities=tool_use,')).toEqual([
      { name: 'capabilities', reason: 'an empty item (two commas, or one at an end)' },
    ]);
  });
  it('numbers, booleans and developer names are checked for form', () => {
    expect(
      invalid(LIST, 'min_context_window=-1&min_output_tokens=1e5&max_blended_price=cheap&open_weights=yes'),
    ).toEqual([
      { name: 'min_context_window', reason: 'must be a whole number from 0 to 999999999' },
      { name: 'min_output_tokens', reason: 'must be a whole number from 0 to 999999999' },
      {
        name: 'max_blended_price',
        reason: 'must be a price in USD per million tokens, a decimal number from 0 to 9999999 (e.g. 2.5)',
      },
      { name: 'open_weights', reason: 'must be true or false' },
    ]);
    for (const p of ['-1', '1e3', '.5', '2.', '1.1234567', 'NaN', 'Infinity'])
      expect(invalid(LIST, `max_blended_price=${p}`)[0]!.name, p).toBe('max_blended_price');
    expect(invalid(LIST, `developer=${'x'.repeat(101)}`)).toEqual([
      { name: 'developer', reason: 'a name longer than 100 characters' },
    ]);
    expect(invalid(LIST, 'developer=Open%01AI')).toEqual([
      { name: 'developer', reason: 'holds control characters or invalid UTF-8' },
    ]);
  });
  it('a filtered list has no prebuilt file (the gateway composes it)', () => {
    expect(fileFor(ok(LIST, 'open_weights=true'), { pageSizes: [50], pages: () => 3 })).toBeNull();
  });
  it('a scalar filter given twice is rejected like any known scalar parameter', () => {
    expect(invalid(LIST, 'min_context_window=1&min_context_window=1')).toEqual([
      { name: 'min_context_window', reason: 'given more than once; send it once' },
    ]);
  });
});

describe('the 400 problem body', () => {
  it('names at most MAX_INVALID_PARAMS parameters: a 4 KB query of unknown ones gets a small answer', () => {
    const query = Array.from({ length: 800 }, (_, i) => `p${i}=1`).join('&');
    expect(query.length).toBeGreaterThan(4000);
    const bad = invalid(LIST, query);
    expect(bad.length).toBe(800);
    const body = problemBody('invalid_parameter', { invalid: bad });
    expect(body.length).toBeLessThan(8_000);
    const p = JSON.parse(body);
    expect(p.invalid_params).toEqual(bad.slice(0, MAX_INVALID_PARAMS));
    expect(p.detail).toMatch(/^p0: not a parameter .*\(and 790 more invalid parameters, not listed\)\.$/);
    expect(JSON.parse(problemBody('invalid_parameter', { invalid: bad.slice(0, 2) })).invalid_params).toHaveLength(2);
  });
});

describe('metrics, catalog, the OpenAPI document and /docs', () => {
  it('take their own parameters, with the same defaults', () => {
    expect(okAny('/api/v1/metrics')).toEqual({ kind: 'metrics', locale: 'en' });
    expect(okAny('/api/v1/metrics', 'locale=ru')).toEqual({ kind: 'metrics', locale: 'ru' });
    expect(okAny('/api/v1/catalog')).toEqual({ kind: 'catalog', locale: 'en', lane: 'verified', displayOnly: false });
    expect(okAny('/api/v1/catalog', 'locale=zh&lane=all&includeDisplayOnly=true')).toEqual({
      kind: 'catalog',
      locale: 'zh',
      lane: 'all',
      displayOnly: true,
    });
    expect(okAny('/api/v1/openapi.json')).toEqual({ kind: 'openapi' });
    // A web page: its query (a link's tracking parameters) is none of the API's business.
    expect(okAny('/docs', 'utm_source=x')).toEqual({ kind: 'docs' });
    expect(okAny('/docs/redoc.standalone.js', 'v=1')).toEqual({ kind: 'docs-script' });
  });
  it('refuse what they do not take, and bad values, naming them', () => {
    expect(invalid('/api/v1/metrics', 'lane=all')).toEqual([
      {
        name: 'lane',
        reason: 'a parameter of the list (GET /api/v1/models), not of GET /api/v1/metrics; accepted: locale',
      },
    ]);
    expect(invalid('/api/v1/catalog', 'lane=bogus&locales=en')).toEqual([
      {
        name: 'locales',
        reason: 'not a parameter of this operation (did you mean locale?); accepted: locale, lane, includeDisplayOnly',
      },
      { name: 'lane', reason: 'must be one of verified, provisional, all' },
    ]);
    expect(invalid('/api/v1/openapi.json', '_=1')).toEqual([
      { name: '_', reason: 'not a parameter of this operation; it takes none' },
    ]);
  });
  it('map to their files, prebuilt for every locale (and lane and variant for the catalog)', () => {
    const prebuilt = { pageSizes: [50], pages: () => 1 };
    expect(fileFor(okAny('/api/v1/metrics', 'locale=zh') as ApiRequest, prebuilt)).toBe('api/v1/metrics/zh.json');
    expect(fileFor(okAny('/api/v1/catalog', 'lane=provisional') as ApiRequest, prebuilt)).toBe(
      'api/v1/catalog/en.provisional.public.json',
    );
    expect(OPENAPI_FILE).toBe('api/v1/openapi.json');
  });
  it('routeOf names the operation of any path, valid or not', () => {
    expect(
      ['/api/v1/models', '/api/v1/models/GPT', '/api/v1/metrics', '/api/v1/catalog', '/docs', '/docs/x', '/'].map(
        routeOf,
      ),
    ).toEqual(['list', 'detail', 'metrics', 'catalog', 'docs', null, null]);
  });
});

describe('slugs and paths', () => {
  it('accepts a slug of up to 160 characters', () => {
    const slug = 'a'.repeat(160);
    expect(ok(`${LIST}/${slug}`)).toMatchObject({ kind: 'detail', slug });
    expect(ok(`${LIST}/claude-3-5-sonnet-20241022`)).toMatchObject({ slug: 'claude-3-5-sonnet-20241022' });
  });
  it.each([
    '..%2Fetc%2Fpasswd',
    '..%2f..%2fmanifest.json',
    '%2e%2e',
    '%2E%2E%2Fx',
    '..',
    '.',
    'a/b',
    'a/../b',
    'A',
    'Gpt-4o',
    'a%00b',
    'a\u0000b',
    'a\\b',
    'a%5Cb',
    'a'.repeat(161),
    'a'.repeat(100_000),
    '',
    'a-',
    '-a',
    'a--b',
    'a_b',
    'a.b',
    'a b',
    'a%20b',
    'é',
    'a?',
    'a/',
  ])('slug %j gives 404', (slug) => {
    const raw = `${LIST}/${slug}`;
    expect(parse(raw)).toEqual({ ok: false, status: 404, reason: 'no such model' });
    // As the gateway may see it after URL parsing, which resolves `..`, `%2e%2e` and cuts at `?`: a 404, or at most
    // a plain slug (a/../b is b) whose file stays inside api/v1/models/<slug>/.
    const viaUrl = parse(new URL(raw.replace(/\u0000/g, '%00'), 'http://localhost').pathname);
    if (viaUrl.ok) {
      expect(viaUrl.request.kind).toBe('detail');
      const file = fileFor(viaUrl.request as ApiRequest, { pageSizes: [50], pages: () => 1 })!;
      expect(file).toMatch(/^api\/v1\/models\/[a-z0-9]+(-[a-z0-9]+)*\/en\.verified\.public\.base\.json$/);
    } else expect(viaUrl.status).toBe(404);
  });
  it('other paths give 404', () => {
    for (const p of [
      '/',
      '/api/v1',
      '/api/v1/models/',
      '/api/v1/modelsx',
      '/api/v2/models',
      '/API/v1/models',
      '/api/v1/models/a/b/c',
    ]) {
      expect(parse(p).ok, p).toBe(false);
    }
    expect(parse('/api/v1/modelsx')).toEqual({ ok: false, status: 404, reason: 'no such path' });
  });
});

describe('lane, includeDisplayOnly, locale, sort', () => {
  it.each(['verified', 'provisional', 'all'])('lane=%s is accepted', (lane) => {
    expect(ok(LIST, `lane=${lane}`).lane).toBe(lane);
    expect(ok(`${LIST}/a`, `lane=${lane}`).lane).toBe(lane);
  });
  it.each(['bogus', 'Verified', 'ALL', '', 'verified,provisional'])('lane=%j is rejected', (lane) => {
    expect(invalid(`${LIST}/a`, `lane=${encodeURIComponent(lane)}`)).toEqual([
      { name: 'lane', reason: 'must be one of verified, provisional, all' },
    ]);
  });
  it('includeDisplayOnly takes exactly true or false', () => {
    expect(ok(LIST, 'includeDisplayOnly=true').displayOnly).toBe(true);
    expect(ok(LIST, 'includeDisplayOnly=false').displayOnly).toBe(false);
    expect(ok(`${LIST}/a`, 'includeDisplayOnly=true').displayOnly).toBe(true);
    for (const v of ['TRUE', '1', 'yes', '']) {
      expect(invalid(LIST, `includeDisplayOnly=${v}`), v).toEqual([
        { name: 'includeDisplayOnly', reason: 'must be true or false' },
      ]);
    }
  });
  it('locale and sort take their listed values only', () => {
    for (const l of ['en', 'zh', 'ru']) expect(ok(`${LIST}/a`, `locale=${l}`).locale).toBe(l);
    expect(invalid(`${LIST}/a`, 'locale=EN')).toEqual([{ name: 'locale', reason: 'must be one of en, zh, ru' }]);
    expect(invalid(LIST, 'locale=zh-CN')).toEqual([{ name: 'locale', reason: 'must be one of en, zh, ru' }]);
    for (const s of ['popular', 'recent', 'newest', 'alphabetical'])
      expect((ok(LIST, `sort=${s}`) as ListRequest).sort).toBe(s);
  });
});

describe('q', () => {
  const q = (v: string) => parse(LIST, new URLSearchParams({ q: v }).toString());
  it('is trimmed; blank means no query', () => {
    expect((ok(LIST, 'q=%20%20gpt%204o%09%0A') as ListRequest).q).toBe('gpt 4o');
    expect((ok(LIST, 'q=%20%20%20') as ListRequest).q).toBeNull();
    expect((ok(LIST, 'q=') as ListRequest).q).toBeNull();
    expect((ok(LIST, 'q=%E6%A8%A1%E5%9E%8B') as ListRequest).q).toBe('模型');
  });
  it('is limited to 200 characters after trimming', () => {
    expect(q('x'.repeat(200))).toMatchObject({ ok: true, request: { q: 'x'.repeat(200) } });
    expect(q(`   ${'x'.repeat(200)}   `)).toMatchObject({ ok: true, request: { q: 'x'.repeat(200) } });
    expect(q('x'.repeat(201))).toEqual({
      ok: false,
      status: 400,
      invalid: [{ name: 'q', reason: 'longer than 200 characters' }],
    });
  });
  it.each(['a\u0000b', 'a\u0001b', 'a\tb', 'a\nb', 'a\u007fb', 'a\u001bb', 'a\ufffdb'])(
    '%j (control characters or invalid UTF-8) is rejected',
    (v) => {
      expect(q(v)).toEqual({
        ok: false,
        status: 400,
        invalid: [{ name: 'q', reason: 'holds control characters or invalid UTF-8' }],
      });
    },
  );
  it('invalid percent-encoded UTF-8 arrives as U+FFFD and is rejected', () => {
    expect(parse(LIST, 'q=%C3%28')).toEqual({
      ok: false,
      status: 400,
      invalid: [{ name: 'q', reason: 'holds control characters or invalid UTF-8' }],
    });
  });
});

describe('file names', () => {
  const prebuilt = { pageSizes: [50, 100], pages: () => 3 };
  it('map a canonical request to one prebuilt file', () => {
    expect(
      fileFor(ok(`${LIST}/a`, 'locale=ru&lane=all&include=pricing,benchmarks&includeDisplayOnly=true'), prebuilt),
    ).toBe('api/v1/models/a/ru.all.display.benchmarks+pricing.json');
    expect(fileFor(ok(LIST), prebuilt)).toBe('api/v1/list/en.verified.public.base/popular-50-1.json');
    expect(fileFor(ok(LIST, 'page=3&page_size=100&sort=newest&lane=provisional&include=capabilities'), prebuilt)).toBe(
      'api/v1/list/en.provisional.public.capabilities/newest-100-3.json',
    );
  });
  it('have no file for a query, a page size not prebuilt, or a page past the last', () => {
    expect(fileFor(ok(LIST, 'q=gpt'), prebuilt)).toBeNull();
    expect(fileFor(ok(LIST, 'page_size=7'), prebuilt)).toBeNull();
    expect(fileFor(ok(LIST, 'page=4'), prebuilt)).toBeNull();
  });
  it('detailFile and listFile spell the layout of docs/publication.md', () => {
    expect(detailFile({ slug: 's', locale: 'zh', lane: 'verified', displayOnly: false, include: [] })).toBe(
      'api/v1/models/s/zh.verified.public.base.json',
    );
    expect(
      listFile({
        locale: 'en',
        lane: 'all',
        displayOnly: true,
        include: ['benchmarks', 'capabilities', 'pricing'],
        sort: 'recent',
        page: 2,
        pageSize: 50,
      }),
    ).toBe('api/v1/list/en.all.display.benchmarks+capabilities+pricing/recent-50-2.json');
  });
});

describe('changes feed', () => {
  const CHANGES = '/api/v1/changes';
  it('takes an optional since, a revision id, and maps it to the prebuilt answer', () => {
    const prebuilt = { pageSizes: [50], pages: () => 1 };
    expect(parse(CHANGES)).toEqual({ ok: true, request: { kind: 'changes', since: null } });
    expect(parse(CHANGES, 'since=r0123abcd')).toEqual({
      ok: true,
      request: { kind: 'changes', since: 'r0123abcd' },
    });
    const r = parse(CHANGES, 'since=v2026.11-rc_1');
    expect(r.ok && fileFor(r.request as ApiRequest, prebuilt)).toBe('api/v1/changes/since/v2026.11-rc_1.json');
    expect(fileFor({ kind: 'changes', since: null }, prebuilt)).toBe('api/v1/changes/index.json');
    expect(changesFile('r1')).toBe('api/v1/changes/since/r1.json');
  });
  it('refuses a since that is no revision id (no path leaves the feed), given twice or bracketed', () => {
    for (const bad of ['../x', '', '.hidden', 'a/b', 'x'.repeat(65), 'r%00']) {
      expect(invalid(CHANGES, `since=${encodeURIComponent(bad)}`), bad).toEqual([
        { name: 'since', reason: 'must be a publication revision, as sent in the X-Publication-Revision header' },
      ]);
    }
    expect(invalid(CHANGES, 'since=a&since=b')).toEqual([
      { name: 'since', reason: 'given more than once; send it once' },
    ]);
    expect(invalid(CHANGES, 'since[]=a')).toEqual([{ name: 'since[]', reason: 'not a parameter; send since once' }]);
  });
  it('refuses other parameters, cache-busters too', () => {
    expect(invalid(CHANGES, 'since=r1&cache=1')[0]!.name).toBe('cache');
  });
  it('is one path: anything below it is no path', () => {
    expect(parse(`${CHANGES}/r1`)).toEqual({ ok: false, status: 404, reason: 'no such path' });
    expect(parse(`${CHANGES}x`)).toEqual({ ok: false, status: 404, reason: 'no such path' });
  });
});
