// The ceiling: one bare node:http process answering the mix's bytes from an in-memory Map, no key, no quota.
// With `headers`, it also sends a response header set like the gateway's (CORS, validators, versions, rate limits):
// the same response bytes without any of the gateway's work, to tell node:http's header cost from the gateway's.
// With `quota`, it is the reference the gateway is held to, "a key check and a quota counter in a Map", on top of
// `headers`: a Map from key to record (any key is taken) and a per-key count in a Map, its remaining count sent in
// RateLimit.
// Usage: node bare-server.mjs PORT urls.json [headers|quota]   (urls.json: [[url, absolute file path], ...])
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
const [port, mapFile, mode] = process.argv.slice(2);
const bodies = new Map();
for (const [url, file] of JSON.parse(readFileSync(mapFile, 'utf8'))) bodies.set(url, readFileSync(file));
const extra =
  mode === undefined
    ? []
    : [
        'access-control-allow-origin',
        '*',
        'access-control-expose-headers',
        'ETag, Last-Modified, Retry-After, RateLimit, RateLimit-Policy, X-Publication-Revision, X-Schema-Version',
        'etag',
        '"0123456789abcdef0123456789abcdef"',
        'last-modified',
        'Sun, 22 Nov 2026 00:00:00 GMT',
        'cache-control',
        'private, max-age=300',
        'x-publication-revision',
        'r-0123456789ab',
        'x-schema-version',
        '1.0.0',
        'ratelimit-policy',
        '"daily";q=1000;w=86400',
        'vary',
        'x-api-key',
        'ratelimit',
        '"daily";r=999;t=43200',
      ];
const keys = new Map();
const counts = new Map();
const server = createServer((req, res) => {
  const body = bodies.get(req.url);
  if (!body) return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  if (mode === 'quota') {
    const key = String(req.headers['x-api-key']);
    let owner = keys.get(key);
    if (owner === undefined) keys.set(key, (owner = { id: key.slice(0, 11) }));
    const n = (counts.get(owner.id) ?? 0) + 1;
    counts.set(owner.id, n);
    extra[extra.length - 1] = `"daily";r=${1e8 - n};t=${Math.ceil((86_400_000 - (Date.now() % 86_400_000)) / 1000)}`;
  }
  res.writeHead(200, [
    ...extra,
    'content-type',
    'application/json; charset=utf-8',
    'content-length',
    String(body.length),
  ]);
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(port), '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
