// POST /mcp: the API as an MCP server (Streamable HTTP, stateless: a server and transport per request, as the SDK
// asks of stateless servers). Each tool turns its arguments into the REST request with the same parameters, checks it
// with the REST parser, and answers from the same prebuilt bodies and composed pages as REST: there is no second
// search or filter. Keys and quota follow REST: the key in x-api-key or Authorization: Bearer; each tools/call counts
// one request when admitted (a bad argument is refused before, an unknown slug counts), and nothing else counts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  API_PREFIX,
  CHANGES_PATH,
  METRICS_PATH,
  parseRequest,
  PRICES_SEGMENT,
  type ApiRequest,
  type InvalidParam,
} from '../schema/requests.js';
import type { ModelDetail } from '../schema/api.js';
import { JSON_CONTENT_TYPE } from '../schema/primitives.js';
import { type ComparisonRow, MCP_DEFAULT_PAGE_SIZE, MCP_TOOLS, type McpToolName } from '../schema/mcp.js';
import { composerOf } from './compose.js';
import { CORS_HEADERS, sendProblem } from './http.js';
import { composePrices, hasPrices } from './prices.js';
import type { Publication } from './publication.js';
import type { Admission } from './quota.js';

/** A JSON-RPC message with a tool's arguments is a few hundred bytes; this bounds what one request can hold. */
export const MAX_MCP_BODY = 64 * 1024;
const SERVER_INFO = { name: 'modelpub', version: '1.0.0' };
const INSTRUCTIONS =
  'A read-only catalog of AI models: prices, context limits, capabilities, speed and benchmark ranks. ' +
  'Find models with search_models, read one with get_model, put a few side by side with compare_models. ' +
  "Every tool call counts one request against the API key's daily quota.";
export const MCP_ALLOW = 'POST, OPTIONS';
/** A browser client (the MCP Inspector) sends these; `Authorization` is never covered by a `*` wildcard. */
export const MCP_PREFLIGHT_HEADERS = [
  ...CORS_HEADERS,
  'access-control-allow-methods',
  MCP_ALLOW,
  'access-control-allow-headers',
  'authorization, x-api-key, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id',
  'access-control-max-age',
  '86400',
  'allow',
  MCP_ALLOW,
];

/** What the handler needs of the gateway (app.ts GatewayDeps has it all). */
export interface McpDeps {
  publication(): Publication;
  keys: { lookup(key: string): { id: string } | null | Promise<{ id: string } | null> };
  quota: { admit(keyId: string): Admission | Promise<Admission>; refund(keyId: string, a: Admission): void };
  log: { error(o: object, msg?: string): void } | null;
  fingerprint(key: string): string;
}
/** What the request's log line gets from here: the key's fingerprint and the tools called (never an argument). */
export interface McpNote {
  keyPrint: string | undefined;
  tool: string | undefined;
}

/** The tools as tools/list shows them: JSON Schemas made once from the zod schemas (draft-07, which clients compile). */
const TOOLS: Tool[] = Object.entries(MCP_TOOLS).map(([name, t]) => ({
  name,
  description: t.description,
  inputSchema: jsonSchema(t.input, 'input') as Tool['inputSchema'],
  outputSchema: jsonSchema(t.output, 'output') as Tool['outputSchema'],
  annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true },
}));

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-07', io, unrepresentable: 'throw' });
  return rest;
}

/** Where the key is: x-api-key, as on REST, or the Authorization header MCP clients are configured with. */
export function mcpKey(req: IncomingMessage): string | undefined {
  const key = req.headers['x-api-key'];
  if (typeof key === 'string' && key !== '') return key;
  const auth = req.headers.authorization;
  const bearer = auth === undefined ? null : /^Bearer +(\S+) *$/i.exec(auth);
  return bearer?.[1];
}

export function createMcpHandler(d: McpDeps) {
  return async function handleMcp(req: IncomingMessage, res: ServerResponse, note: McpNote): Promise<number> {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, MCP_PREFLIGHT_HEADERS);
      res.end();
      return 204;
    }
    if (req.method !== 'POST')
      return sendProblem(res, req, 'method_not_allowed', ['allow', MCP_ALLOW], {
        detail: 'This MCP server is stateless: it answers POST (and the OPTIONS preflight) only.',
      });
    const key = mcpKey(req);
    if (key === undefined)
      return sendProblem(res, req, 'missing_api_key', [], {
        detail: 'Send your key in the x-api-key header, or as Authorization: Bearer <key>.',
      });
    const owner = key.length <= 256 ? await d.keys.lookup(key) : null;
    if (d.log) note.keyPrint = owner ? owner.id.slice(2) : d.fingerprint(key);
    if (!owner) return sendProblem(res, req, 'invalid_api_key', [], { detail: 'The key is unknown or revoked.' });

    const raw = await readBody(req);
    if (raw === null)
      return sendProblem(res, req, 'bad_request', [], { detail: `The request body is over ${MAX_MCP_BODY} bytes.` });
    let message: unknown;
    try {
      message = JSON.parse(raw.toString('utf8'));
    } catch {
      res.writeHead(400, [...CORS_HEADERS, 'content-type', JSON_CONTENT_TYPE]);
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: not JSON' } }));
      return 400;
    }

    const server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: false } },
      instructions: INSTRUCTIONS,
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const name = request.params.name;
      const logged = name in MCP_TOOLS ? name : 'unknown'; // a name the client made up is not logged
      note.tool = note.tool === undefined ? logged : `${note.tool},${logged}`;
      return call(d, res, owner.id, name, request.params.arguments ?? {});
    });
    // JSON answers, not an event stream: the headers a call sets (RateLimit, Retry-After) go out with its answer.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    for (let i = 0; i < CORS_HEADERS.length; i += 2) res.setHeader(CORS_HEADERS[i]!, CORS_HEADERS[i + 1]!);
    res.setHeader('cache-control', 'no-store');
    await server.connect(transport);
    await transport.handleRequest(req, res, message);
    return res.statusCode;
  };
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_MCP_BODY) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_MCP_BODY ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

// ---- tools ---------------------------------------------------------------------------------------------------------

type Args = Record<string, unknown>;
const failure = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });
const success = (structured: Record<string, unknown>, text: string): CallToolResult => ({
  structuredContent: structured,
  content: [{ type: 'text', text }],
});

/** A tool's REST request, from its checked arguments: the REST parser has the last word on every value. */
interface Planned {
  requests: ApiRequest[];
  /** Turns the answers' data into the tool's result. */
  result(data: unknown[]): CallToolResult;
}

async function call(d: McpDeps, res: ServerResponse, keyId: string, name: string, raw: Args): Promise<CallToolResult> {
  if (!(name in MCP_TOOLS))
    return failure(`No tool named ${JSON.stringify(name.slice(0, 60))}; tools: ${Object.keys(MCP_TOOLS).join(', ')}.`);
  const tool = name as McpToolName;
  const parsed = MCP_TOOLS[tool].input.safeParse(raw);
  if (!parsed.success) return failure(argumentErrors(parsed.error));
  const plan = PLANS[tool](parsed.data as Args);
  if ('error' in plan) return failure(plan.error); // refused before the quota, as a REST 400

  const a = await d.quota.admit(keyId);
  for (const [h, v] of rateHeaders(a)) res.setHeader(h, v);
  if (!a.ok) {
    res.setHeader('retry-after', String(a.resetSeconds));
    const resets = new Date(Date.parse(a.day) + 86_400_000).toISOString();
    return failure(
      `This key's daily quota of ${a.limit} requests is spent: it resets at 00:00 UTC (${resets}), in ${a.resetSeconds} s.`,
    );
  }
  try {
    const pub = d.publication();
    const data: unknown[] = [];
    for (const request of plan.requests) {
      const answer = await answerOf(pub, request);
      if (answer.kind === 'invalid') {
        d.quota.refund(keyId, a); // as a REST 400 known only once admitted (an unknown developer): not counted
        return failure(paramErrors(answer.invalid));
      }
      if (answer.kind === 'not_found') return failure(notFound(request, tool === 'compare_models' ? 'slugs' : 'slug'));
      if (answer.kind === 'gone') return failure(RESYNC);
      data.push(answer.data);
    }
    return plan.result(data);
  } catch (err) {
    d.quota.refund(keyId, a); // not answered: not counted, as a REST 503
    d.log?.error({ err: String(err), route: 'mcp', tool }, 'tool call failed');
    return failure('The publication could not be read just now; try again shortly. This call did not count.');
  }
}

type Answer =
  | { kind: 'ok'; data: unknown }
  | { kind: 'invalid'; invalid: InvalidParam[] }
  | { kind: 'not_found' }
  | { kind: 'gone' };

/** REST's answer to a request, as REST finds it: a prebuilt body, or a composed list page. */
async function answerOf(pub: Publication, request: ApiRequest): Promise<Answer> {
  const file = pub.prebuilt(request);
  let body: Buffer;
  if (file !== null) body = pub.cachedBody(file) ?? (await pub.body(file));
  else if (request.kind === 'list') {
    const composer = composerOf(pub);
    const f = composer.cached(request) ?? (await composer.compose(request));
    if ('invalid' in f) return { kind: 'invalid', invalid: f.invalid };
    body = Buffer.concat(f.body);
  } else if (request.kind === 'prices' && request.at !== null && hasPrices(pub)) {
    const f = await composePrices(pub, { ...request, at: request.at });
    if (f === null) return { kind: 'not_found' };
    body = Buffer.concat(f.body);
  } else return { kind: request.kind === 'changes' ? 'gone' : 'not_found' };
  return { kind: 'ok', data: (JSON.parse(body.toString('utf8')) as { data: unknown }).data };
}

/** The REST request of a path and parameters, or the reasons it is refused, named by argument. */
function rest(path: string, args: Args): ApiRequest | { error: string } {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(args)) {
    if (v === undefined) continue;
    params.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const r = parseRequest(path, params);
  if (r.ok) return r.request as ApiRequest;
  if (r.status === 400) return { error: paramErrors(r.invalid) };
  return { error: r.reason };
}

/** The detail of a slug (canonical: schema/mcp.ts checked it, as REST answers 404 before the key for one that is not). */
const detailRequest = (slug: string, args: Args) => rest(`${API_PREFIX}/${slug}`, args);

const PLANS: Record<McpToolName, (args: Args) => Planned | { error: string }> = {
  search_models(args) {
    const r = rest(API_PREFIX, { page_size: MCP_DEFAULT_PAGE_SIZE, ...args });
    if ('error' in r) return r;
    return {
      requests: [r],
      result([data]) {
        const d = data as { models: { slug: string; name: string; developer: string }[]; pagination: Pagination };
        const p = d.pagination;
        const names = d.models.map((m) => `${m.name} (${m.slug}, ${m.developer})`).join('; ');
        return success(
          d as unknown as Args,
          `${p.total} models match; page ${p.page} of ${p.total_pages}${names ? `: ${names}` : ''}.`,
        );
      },
    };
  },
  get_model({ slug, ...args }) {
    const r = detailRequest(slug as string, args);
    if ('error' in r) return r;
    return { requests: [r], result: ([model]) => success({ model }, modelLine(model as ModelDetail)) };
  },
  compare_models({ slugs, lane }) {
    const requests: ApiRequest[] = [];
    const seen = new Set<string>();
    for (const slug of slugs as string[]) {
      if (seen.has(slug)) return { error: `slugs: ${JSON.stringify(slug)} is listed twice.` };
      seen.add(slug);
      const r = detailRequest(slug, { include: ['capabilities', 'pricing'], lane });
      if ('error' in r) return r;
      requests.push(r);
    }
    return {
      requests,
      result(details) {
        const models = (details as ModelDetail[]).map(comparisonRow);
        const text = models
          .map(
            (m) =>
              `${m.name} (${m.slug}): ${prices(m.input_price_per_million, m.output_price_per_million)}, ` +
              `context ${m.context_window_tokens}`,
          )
          .join('; ');
        return success({ models }, `${text}.`);
      },
    };
  },
  get_prices({ slug, at }) {
    const r = rest(`${API_PREFIX}/${slug as string}${PRICES_SEGMENT}`, { at });
    if ('error' in r) return r;
    return {
      requests: [r],
      result([data]) {
        const d = data as { slug: string; offers: { provider: string; history: unknown[] }[] };
        const rows = d.offers.reduce((n, o) => n + o.history.length, 0);
        const when = at === undefined ? '' : ` in force on ${at as string}`;
        return success(d, `${d.slug}: ${d.offers.length} offers with dated prices${when}, ${rows} price rows.`);
      },
    };
  },
  list_metrics() {
    const r = rest(METRICS_PATH, {});
    if ('error' in r) return r;
    return {
      requests: [r],
      result([data]) {
        const d = data as { metrics: { metric_key: string }[] };
        return success(d, `${d.metrics.length} metrics: ${d.metrics.map((m) => m.metric_key).join(', ')}.`);
      },
    };
  },
  list_changes(args) {
    const r = rest(CHANGES_PATH, args);
    if ('error' in r) return r;
    return {
      requests: [r],
      result([data]) {
        const d = data as { latest: string; publications: { summary: string; publicationRevision: string }[] };
        const lines = d.publications.slice(0, 5).map((p) => `${p.publicationRevision}: ${p.summary}`);
        return success(
          d,
          `Latest revision ${d.latest}; ${d.publications.length} publications listed${lines.length ? `. ${lines.join('; ')}` : ''}.`,
        );
      },
    };
  },
};
interface Pagination {
  page: number;
  total: number;
  total_pages: number;
}

const usd = (n: number | null | undefined) => (n === null || n === undefined ? 'n/a' : `$${n}`);
const prices = (input: number | null, output: number | null) => `${usd(input)} in / ${usd(output)} out`;
/** A comparison row from a detail with capabilities and pricing (schema/mcp.ts ComparisonRow). */
function comparisonRow(m: ModelDetail): z.infer<typeof ComparisonRow> {
  const p = m.pricing ?? null;
  return {
    slug: m.slug,
    name: m.name,
    developer: m.developer,
    release_date: m.release_date,
    context_window_tokens: m.context_window_tokens,
    max_output_tokens: m.max_output_tokens,
    input_price_per_million: p?.input_price_per_million ?? null,
    output_price_per_million: p?.output_price_per_million ?? null,
    blended_price_per_million: p?.blended_price_per_million ?? null,
    cache_read_price_per_million: p?.cache_read_price_per_million ?? null,
    cache_write_price_per_million: p?.cache_write_price_per_million ?? null,
    status: m.lifecycle.status,
    capabilities: m.capabilities?.keys ?? [],
    benchmarks: m.benchmark_summary.map((b) => ({
      metric_key: b.metric_key,
      label: b.label,
      value: b.value,
      unit: b.unit,
      rank: b.rank,
      ranked_count: b.ranked_count,
    })),
  };
}

function modelLine(m: ModelDetail): string {
  const p = m.pricing_summary;
  const price = p ? `; ${usd(p.input_price_per_million)} in / ${usd(p.output_price_per_million)} out per M tokens` : '';
  return `${m.name} (${m.slug}) by ${m.developer}: context ${m.context_window_tokens} tokens, max output ${m.max_output_tokens}${price}.`;
}

function notFound(r: ApiRequest, name: string): string {
  if (r.kind === 'prices') return `${name}: no model of the slug ${JSON.stringify(r.slug)} has dated prices.`;
  const slug = r.kind === 'detail' ? r.slug : '';
  const lane = r.kind === 'detail' ? r.lane : 'verified';
  const where = lane === 'all' ? '' : ` in lane ${lane}; lane "all" covers every model`;
  return `${name}: no published model has the slug ${JSON.stringify(slug)}${where}.`;
}
const RESYNC =
  'since: the revision is unknown, or older than the publications the changes feed keeps (the last 30); ' +
  'read the catalog again (search_models, get_model), then call list_changes with the latest revision it gives.';

/** Every bad argument, named as the tool takes it. */
function argumentErrors(error: z.ZodError): string {
  const parts = error.issues.map((i) => {
    if (i.code === 'unrecognized_keys')
      return `${i.keys.join(', ')}: not an argument of this tool (see its inputSchema)`;
    return `${i.path.length ? i.path.join('.') : 'arguments'}: ${i.message}`;
  });
  return `Invalid arguments. ${parts.join('; ')}.`;
}
const paramErrors = (invalid: InvalidParam[]) =>
  `Invalid arguments. ${invalid.map((i) => `${i.name}: ${i.reason}`).join('; ')}.`;

const rateHeaders = (a: Admission): [string, string][] => [
  ['ratelimit-policy', `"daily";q=${a.limit};w=86400`],
  ['ratelimit', `"daily";r=${a.remaining};t=${a.resetSeconds}`],
];
