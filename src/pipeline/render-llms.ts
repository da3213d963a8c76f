// GET /llms.txt: what the API is, for a language model or an agent reading it first (the llms.txt convention: an H1,
// a summary blockquote, then sections of links). The endpoints and the MCP tools come from the same lists the gateway
// serves (routes.ts, schema/mcp.ts), each with one example built from this publication's own models, so every example
// works. It names its revision as every body does (the writer keeps it while the text is unchanged).
import {
  API_PREFIX,
  CATALOG_PATH,
  CHANGES_PATH,
  DOCS_PATH,
  MCP_PATH,
  METRICS_PATH,
  OPENAPI_PATH,
} from '../schema/requests.js';
import { MCP_TOOLS, type McpToolName } from '../schema/mcp.js';
import type { BodyParts } from '../publication/assemble.js';

export const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8';

export interface LlmsOptions {
  name: string;
  url: string;
  /** Models in the default (verified) lane, and in every lane. */
  verified: number;
  all: number;
  /** The two most popular models of the default lane, for the examples (fewer when the lane has fewer). */
  slugs: readonly string[];
  /** The first one's developer, as published. */
  developer: string | null;
}

/** The text around its revision. */
export function llmsParts(o: LlmsOptions): BodyParts {
  const [a = 'gpt-4o', b = a] = o.slugs;
  const dev = o.developer ?? 'OpenAI';
  const q = (s: string) => encodeURIComponent(s).replace(/%3A/g, ':').replace(/%2C/g, ',');
  const tools: Record<McpToolName, unknown> = {
    search_models: { capabilities: ['input:image', 'tool_use'], developer: [dev], max_blended_price: 5 },
    get_model: { slug: a, include: ['pricing', 'capabilities'] },
    compare_models: { slugs: [a, b] },
    get_prices: { slug: a },
    list_metrics: {},
    list_changes: { since: '<a revision>' },
  };
  const config = {
    mcpServers: {
      [o.name]: { type: 'http', url: `https://<this host>${MCP_PATH}`, headers: { 'x-api-key': '<your key>' } },
    },
  };
  const summary = [
    `A read-only public JSON API about AI models: ${o.verified} verified models (${o.all} in all) with their prices,`,
    'context and output limits, capabilities, speed and benchmark ranks. REST answers with an API key, and the same',
    `answers as MCP tools at ${MCP_PATH}.`,
  ];
  const notes = [
    `- Key: every request but this file, ${OPENAPI_PATH} and ${DOCS_PATH} needs an API key in the \`x-api-key\` header`,
    `  (at ${MCP_PATH}, \`Authorization: Bearer <key>\` works too). Keys are issued by whoever runs this gateway`,
    '  (`modelpub keys create`); without one the answer is 401.',
    '- Quota: each key has a number of requests per UTC day (the `RateLimit-Policy` header states it, `RateLimit` what',
    '  is left). Every MCP tool call counts one request, as a REST request does; a refused bad argument does not.',
    '  Revalidate with `If-None-Match` and cache answers for five minutes.',
    `- Data: every answer carries an \`attribution\` object; a display of the data must show its backlink (${o.url}).`,
    "  Each model's provenance names its sources and their licences.",
  ];
  const filter = `capabilities=input:image,tool_use&developer=${q(dev)}&sort=newest&page_size=10`;
  const rest = [
    `- [List, search and filter models](${API_PREFIX}): one page of models, e.g. \`GET ${API_PREFIX}?${filter}\``,
    `- [One model](${API_PREFIX}/${a}): its detail, e.g. \`GET ${API_PREFIX}/${a}?include=pricing,capabilities,benchmarks\``,
    `- [Metrics](${METRICS_PATH}): every benchmark metric models are ranked by, e.g. \`GET ${METRICS_PATH}\``,
    `- [Catalog export](${CATALOG_PATH}): every model of a lane with every include in one answer,` +
      ` e.g. \`GET ${CATALOG_PATH}?lane=verified\``,
    `- [Changes feed](${CHANGES_PATH}): what changed in recent publications, e.g. \`GET ${CHANGES_PATH}?since=<revision>\``,
    `- [OpenAPI document](${OPENAPI_PATH}): every operation, parameter and field (no key)`,
    `- [API reference](${DOCS_PATH}): the OpenAPI document rendered for people (no key)`,
  ];
  const mcp = [
    `- [MCP server](${MCP_PATH}): Streamable HTTP, stateless (POST only), read-only. Client config: \`${JSON.stringify(config)}\``,
    ...Object.entries(MCP_TOOLS).map(
      ([name, t]) =>
        `- [${name}](${MCP_PATH}): ${t.description} Example arguments: \`${JSON.stringify(tools[name as McpToolName])}\``,
    ),
  ];
  // Markdown joins a paragraph's lines: the text is wrapped here for the source, not for the reader.
  const head = [`# ${o.name}`, '', `> ${summary.join(' ')}`, '', ...notes, '- This file describes publication '].join(
    '\n',
  );
  const tail = [
    ' (the X-Publication-Revision header names the live one).',
    '',
    '## REST API',
    '',
    ...rest,
    '',
    '## MCP tools',
    '',
    ...mcp,
    '',
    '## Optional',
    '',
    `- [${o.name}](${o.url}): the publisher, whose backlink every display of the data carries`,
    '',
  ].join('\n');
  return { head, tail };
}
