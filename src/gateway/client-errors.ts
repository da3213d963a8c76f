// Requests node:http cannot hand to the handler: headers or a target over --max-header-size (16 KiB), bytes that are
// not HTTP/1.1, a request not complete within requestTimeout. Node's own answer to them is a bare status line with no
// headers: a browser page sees a network error instead of a status (no CORS headers), and API clients get no problem
// body. Here they get what every other error gets: problem+json with CORS headers, and a request log line.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { PROBLEMS, problemBody, type ProblemCode } from '../schema/problems.js';
import { problemHeaders } from './http.js';

export interface ClientErrorLog {
  info(o: object): void;
}

/** The problem a parser or timeout error stands for. */
export function problemFor(err: Error & { code?: string }): ProblemCode {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'headers_too_large';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'request_timeout';
    default:
      return 'bad_request';
  }
}

/** A whole HTTP/1.1 answer, as bytes for the socket; the connection closes after it (the parser cannot go on). */
export function rawProblem(code: ProblemCode, detail: string | undefined, date = new Date()): string {
  const status = PROBLEMS[code].status;
  const body = problemBody(code, detail === undefined ? {} : { detail });
  const headers = [...problemHeaders(body), 'date', date.toUTCString(), 'connection', 'close'];
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n`;
  for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return `${head}\r\n${body}`;
}

type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/** Ends the connection once node:http has sent every answer queued on it (it hands the socket to each in turn). */
function endAfterAnswers(socket: HttpSocket): void {
  // node:http's own field for the response using the socket (set from assignment until it finishes); not public,
  // but Node's default listener reads it for the same decision.
  const current = socket._httpMessage;
  if (!current) socket.end();
  else current.once('close', () => endAfterAnswers(socket)); // by then the next queued answer has the socket
}

/**
 * The server's 'clientError' listener. It answers only when no response is in flight on the connection. With one
 * pending (earlier pipelined requests still being answered), a client would read the error as the first one's
 * answer: those answers are let finish instead, and the connection closes after the last (node:http's own listener
 * destroys the socket at once and loses them). A connection no longer writable (a reset, a peer gone) is closed.
 * node:http reports the parser's error again for every later chunk the client sends: only the first counts, and the
 * connection is no longer read.
 */
export function onClientError(log: ClientErrorLog | null) {
  const handled = new WeakSet<Socket>();
  return (err: Error & { code?: string }, socket: HttpSocket): void => {
    if (handled.has(socket)) return;
    handled.add(socket);
    socket.pause();
    const inFlight = socket._httpMessage;
    const code = problemFor(err);
    const writable = socket.writable && err.code !== 'ECONNRESET';
    const answered = writable && !inFlight;
    if (answered) {
      // The parser's code says what was wrong with the bytes, and holds nothing the client did not send.
      const detail =
        code === 'bad_request' && err.code ? `The request is not valid HTTP/1.1 (${err.code}).` : undefined;
      socket.end(rawProblem(code, detail), () => socket.destroy());
    } else if (writable) {
      endAfterAnswers(socket);
    } else {
      socket.destroy();
    }
    try {
      log?.info({ route: 'unparsed', status: answered ? PROBLEMS[code].status : null, err: err.code ?? err.message });
    } catch {
      /* the logger's own problem */
    }
  };
}

/**
 * The server's 'checkExpectation' listener: a request with an Expect other than 100-continue gets 417 as problem+json
 * with CORS headers (node:http's own answer is a bare 417). It is not handed to the handler, so it never counts.
 */
export function onUnmetExpectation(log: ClientErrorLog | null) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const body = problemBody('expectation_failed');
    res.writeHead(417, problemHeaders(body, ['connection', 'close']));
    res.end(req.method === 'HEAD' ? undefined : body);
    try {
      log?.info({ method: req.method, route: 'other', status: 417 });
    } catch {
      /* the logger's own problem */
    }
  };
}
