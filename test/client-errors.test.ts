// The 'clientError' listener on a real socket pair: what a client reads for each kind of error node:http reports
// before a request reaches the handler (the 30-second request timeout among them, without waiting for it).
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { onClientError, problemFor } from '../src/gateway/client-errors.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Connects a client, hands the server's end of the connection to the listener with `err`, returns what the client read. */
async function clientReads(
  err: Error & { code?: string },
  logged: object[],
  prepare?: (s: Socket) => void,
): Promise<string> {
  const listener = onClientError({ info: (o) => logged.push(o) });
  server = createServer((socket) => {
    prepare?.(socket);
    listener(err, socket);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return new Promise((resolve, reject) => {
    const client = connect((server!.address() as AddressInfo).port, '127.0.0.1');
    let text = '';
    client.on('data', (d: Buffer) => (text += d.toString('utf8')));
    client.on('error', reject);
    client.on('close', () => resolve(text));
  });
}

const codeError = (code: string) => Object.assign(new Error(code), { code });

describe('client errors', () => {
  it('maps parser and timeout errors to problems', () => {
    expect(problemFor(codeError('HPE_HEADER_OVERFLOW'))).toBe('headers_too_large');
    expect(problemFor(codeError('ERR_HTTP_REQUEST_TIMEOUT'))).toBe('request_timeout');
    expect(problemFor(codeError('HPE_INVALID_METHOD'))).toBe('bad_request');
    expect(problemFor(new Error('no code'))).toBe('bad_request');
  });

  it('a request not complete in time reads 408 problem+json with CORS, and the connection closes', async () => {
    const logged: object[] = [];
    const text = await clientReads(codeError('ERR_HTTP_REQUEST_TIMEOUT'), logged);
    const [head, body] = text.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(head).toContain('\r\ncontent-type: application/problem+json\r\n');
    expect(head).toContain('\r\naccess-control-allow-origin: *\r\n');
    expect(head).toMatch(/\r\ndate: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\r\n/);
    expect(Number(/content-length: (\d+)/.exec(head!)?.[1])).toBe(Buffer.byteLength(body!));
    expect(JSON.parse(body!)).toMatchObject({
      status: 408,
      code: 'request_timeout',
      type: 'https://modelpub.dev/problems/request-timeout',
    });
    expect(logged).toEqual([{ route: 'unparsed', status: 408, err: 'ERR_HTTP_REQUEST_TIMEOUT' }]);
  });

  it('handles a connection once: node:http reports the error again for each later chunk', async () => {
    const logged: object[] = [];
    const listener = onClientError({ info: (o) => logged.push(o) });
    const socket = Object.assign(new EventEmitter(), {
      writable: false,
      pause() {},
      destroy() {},
    }) as unknown as Socket;
    for (let i = 0; i < 5; i++) listener(codeError('HPE_INVALID_METHOD'), socket);
    expect(logged).toHaveLength(1);
  });

  it('lets the responses in flight on the connection finish, then closes; after a reset it only closes', async () => {
    const logged: object[] = [];
    // Two answers queued: node:http hands the socket to the second when the first finishes.
    const inFlight = await clientReads(codeError('HPE_INVALID_METHOD'), logged, (s) => {
      const [first, second] = [new EventEmitter(), new EventEmitter()];
      Object.assign(s, { _httpMessage: first });
      setTimeout(
        () =>
          s.write('the answer in flight, ', () => {
            Object.assign(s, { _httpMessage: second });
            first.emit('close');
            setTimeout(
              () =>
                s.write('and the one queued behind it', () => {
                  Object.assign(s, { _httpMessage: null });
                  second.emit('close');
                }),
              20,
            );
          }),
        20,
      );
    });
    expect(inFlight).toBe('the answer in flight, and the one queued behind it');
    const reset = await clientReads(codeError('ECONNRESET'), logged);
    expect(reset).toBe('');
    expect(logged).toEqual([
      { route: 'unparsed', status: null, err: 'HPE_INVALID_METHOD' },
      { route: 'unparsed', status: null, err: 'ECONNRESET' },
    ]);
  });
});
