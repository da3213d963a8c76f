// Errors as RFC 9457 problem details: the catalogue of codes and the body each is answered with. `code` is the stable
// machine-readable name; `type` is its URI. The gateway sends these, the OpenAPI document lists them.
import type { InvalidParam } from './requests.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export const PROBLEMS = {
  missing_api_key: { status: 401, title: 'API key required', detail: 'Send your key in the x-api-key header.' },
  invalid_api_key: { status: 401, title: 'API key not valid', detail: 'The x-api-key is unknown or revoked.' },
  invalid_parameter: {
    status: 400,
    title: 'Invalid query parameter',
    detail: 'One or more query parameters are not valid; see invalid_params.',
  },
  bad_request: { status: 400, title: 'Bad request', detail: 'The request line could not be read.' },
  request_timeout: { status: 408, title: 'Request timeout', detail: 'The request did not arrive in full in time.' },
  not_found: { status: 404, title: 'Not found', detail: 'No such model or path.' },
  resync_required: {
    status: 410,
    title: 'Revision not in the changes feed',
    detail:
      'The since revision is unknown, or older than the publications the changes feed keeps (the last 30): ' +
      'fetch the catalog again from /api/v1/catalog (or the list and detail operations), then follow ' +
      '/api/v1/changes?since=<the X-Publication-Revision it was served with>.',
  },
  expectation_failed: {
    status: 417,
    title: 'Expectation failed',
    detail: 'The only Expect this API meets is 100-continue.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    detail: 'This API answers GET, HEAD and OPTIONS only.',
  },
  uri_too_long: { status: 414, title: 'URI too long', detail: 'The request target is longer than this API accepts.' },
  headers_too_large: {
    status: 431,
    title: 'Request header fields too large',
    detail: 'The request line and headers are longer than this API accepts.',
  },
  quota_exceeded: {
    status: 429,
    title: 'Daily quota exceeded',
    detail: 'This key has used its requests for the current UTC day; see Retry-After.',
  },
  unavailable: {
    status: 503,
    title: 'Service unavailable',
    detail: 'The publication or the key and quota store could not be read; try again shortly.',
  },
  too_many_pipelined: {
    status: 503,
    title: 'Too many pipelined requests',
    detail:
      'Too many requests wait for their answers on this connection; it closes after this answer: send the rest on a new connection.',
  },
} as const;
export type ProblemCode = keyof typeof PROBLEMS;

/**
 * At most this many parameters are named in a 400: a request made of a few thousand bad parameters would otherwise
 * get an answer a hundred times its size, each with its reason and the accepted names.
 */
export const MAX_INVALID_PARAMS = 10;

export function problemBody(code: ProblemCode, extra: { detail?: string; invalid?: InvalidParam[] } = {}): string {
  const p = PROBLEMS[code];
  let invalid = extra.invalid;
  let more = '';
  if (invalid && invalid.length > MAX_INVALID_PARAMS) {
    more = ` (and ${invalid.length - MAX_INVALID_PARAMS} more invalid parameters, not listed)`;
    invalid = invalid.slice(0, MAX_INVALID_PARAMS);
  }
  return JSON.stringify({
    type: `https://modelpub.dev/problems/${code.replace(/_/g, '-')}`,
    title: p.title,
    status: p.status,
    // Each bad parameter in the detail too: clients often show only title and detail.
    detail:
      extra.detail ??
      (invalid?.length ? `${invalid.map((i) => `${i.name}: ${i.reason}`).join('; ')}${more}.` : p.detail),
    code,
    ...(invalid ? { invalid_params: invalid } : {}),
  });
}
