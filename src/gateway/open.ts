// Answers that need no key and count against no quota: the OpenAPI document and llms.txt (files of the publication,
// so they change with the publication they describe) and the human API reference at /docs, rendered in the browser from that
// document by Redoc's standalone bundle, served from the redoc package: never fetched from a CDN.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { LLMS_FILE, OPENAPI_FILE } from '../publication/layout.js';
import type { ApiRequest, OpenRequest } from '../schema/requests.js';
import { CORS_HEADERS, notModified, PUBLIC_CACHE_CONTROL, SCRIPT_CACHE_CONTROL, sendProblem } from './http.js';
import type { FileInfo, Publication } from './publication.js';
import { codedEtag, etagOf, httpDate } from './validators.js';

export const isOpen = (r: ApiRequest | OpenRequest): r is OpenRequest =>
  r.kind === 'openapi' || r.kind === 'docs' || r.kind === 'docs-script' || r.kind === 'llms';

// Relative URLs, so the page works wherever the gateway is mounted (/docs -> api/v1/openapi.json is /api/v1/...).
// The policy lets the page load nothing but this gateway's own script and document (Redoc's footer asks for its logo
// from Redocly's CDN: refused, and the footer shows its text alone).
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="api/v1/openapi.json" hide-download-button="false" expand-responses="200" json-sample-expand-level="3"></redoc>
<script src="docs/redoc.standalone.js"></script>
</body>
</html>
`;
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'", // Redoc's styled-components write style elements
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:", // Redoc's search index runs in a worker made from a blob
].join('; ');

interface Static {
  body: Buffer;
  info: FileInfo;
}
const staticFile = (body: Buffer, since: string): Static => {
  const sha256 = createHash('sha256').update(body).digest('hex');
  return {
    body,
    info: {
      entry: { path: '', sha256, bytes: body.length, content_type: '', revision: 'static', last_modified: since },
      etag: etagOf(sha256),
      etagBr: codedEtag(etagOf(sha256), 'br'),
      etagGzip: codedEtag(etagOf(sha256), 'gzip'),
      lastModified: httpDate(since),
      encoded: null,
    },
  };
};
/** When this gateway process started: the Last-Modified of what it serves from its own files. */
const STARTED = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
const page = staticFile(Buffer.from(PAGE), STARTED);
let script: Promise<Static> | undefined;
function redocScript(): Promise<Static> {
  script ??= readFile(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js')).then((b) =>
    staticFile(b, STARTED),
  );
  script.catch(() => {
    script = undefined; // a failed read is tried again by the next request
  });
  return script;
}

/** Answers an open request; a publication built before the OpenAPI document existed answers 404 for it. */
export function serveOpen(
  req: IncomingMessage,
  res: ServerResponse,
  pub: Publication,
  r: OpenRequest,
): number | Promise<number> {
  if (r.kind === 'docs')
    return send(req, res, page, 'text/html; charset=utf-8', PUBLIC_CACHE_CONTROL, [
      'content-security-policy',
      CONTENT_SECURITY_POLICY,
    ]);
  if (r.kind === 'docs-script')
    return redocScript().then((s) => send(req, res, s, 'text/javascript; charset=utf-8', SCRIPT_CACHE_CONTROL));
  const [file, what] = r.kind === 'llms' ? [LLMS_FILE, 'llms.txt'] : [OPENAPI_FILE, 'its OpenAPI document'];
  const info = pub.info(file);
  if (info === null)
    return sendProblem(res, req, 'not_found', [], { detail: `This publication was built before the API had ${what}.` });
  const headers = ['x-publication-revision', pub.revision, 'x-schema-version', pub.meta.schemaVersion];
  const cached = pub.cachedBody(info);
  const type = info.entry.content_type;
  if (cached !== undefined) return send(req, res, { body: cached, info }, type, PUBLIC_CACHE_CONTROL, headers);
  return pub.body(info).then((body) => send(req, res, { body, info }, type, PUBLIC_CACHE_CONTROL, headers));
}

function send(
  req: IncomingMessage,
  res: ServerResponse,
  f: Static,
  type: string,
  cacheControl: string,
  extra: string[] = [],
): number {
  const head = [
    ...CORS_HEADERS,
    'etag',
    f.info.etag,
    'last-modified',
    f.info.lastModified,
    'cache-control',
    cacheControl,
    ...extra,
  ];
  if (notModified(req, f.info)) {
    res.writeHead(304, head);
    res.end();
    return 304;
  }
  res.writeHead(200, [...head, 'content-type', type, 'content-length', String(f.body.length)]);
  res.end(req.method === 'HEAD' ? undefined : f.body);
  return 200;
}
