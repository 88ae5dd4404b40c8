import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { isBlockedAddress } from './targets.ts';

/** At most this much of a receiver's answer is read (and it is never shown to anyone: only its status is kept). */
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface Answer {
  readonly status?: number;
  readonly retryAfterMs?: number;
  /** Why no status came back: timeout, blocked_destination, ECONNREFUSED… */
  readonly error?: string;
}

export interface PostOptions {
  readonly timeoutMs: number;
  readonly allowPrivate: boolean;
  /** The resolver used at connect time (tests stub DNS here); node's by default. */
  readonly lookup?: LookupFunction;
}

/**
 * Wraps a resolver so that a host which now resolves to a blocked address is refused (DNS rebinding). Every
 * address is checked, since node may try any of them (it races IPv4 and IPv6), and the answer comes in the
 * form asked for: a list when `all` is set, as node's connect asks by default.
 */
export const guardedLookup =
  (lookup: LookupFunction = dnsLookup): LookupFunction =>
  (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, '', 0);
      const addresses: LookupAddress[] = Array.isArray(found)
        ? found
        : [{ address: String(found), family: isIP(String(found)) }];
      const [first] = addresses;
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      if (addresses.some((a) => isBlockedAddress(a.address))) {
        return callback(Object.assign(new Error('blocked address'), { code: 'EBLOCKED' }), '', 0);
      }
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };

const retryAfterOf = (value: string | string[] | undefined): number | undefined => {
  if (typeof value !== 'string') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
};

/** The log's name for a failure: node's error codes, with undici's own mapped to what they mean. */
const errorName = (error: Error & { code?: string }): string => {
  switch (error.code) {
    case 'EBLOCKED':
      return 'blocked_destination';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'timeout';
    // The connection closed (or was cut) before an answer: node's http calls that ECONNRESET too.
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_DESTROYED':
    case 'UND_ERR_CLOSED':
      return 'ECONNRESET';
    default:
      return error.code ?? 'connection_failed';
  }
};

/** Where a URL's requests go: the connection pool's key (origin) and the request path. */
interface Target {
  readonly origin: string;
  readonly path: string;
}
/** Parsed URLs, kept while there are few (receivers are few; callbacks may each have their own). */
const TARGETS_KEPT = 1024;

/**
 * One attempt, as undici's dispatch handler: settles once, with the first of the deadline, the end of the answer
 * (or its 64 KiB cap), and a failure. Once the status line and headers are in, they are the answer, even if the
 * connection breaks in the body. Settling early aborts the request, which destroys its connection.
 */
class Attempt implements Dispatcher.DispatchHandler {
  #settle: (answer: Answer) => void;
  #controller: Dispatcher.DispatchController | undefined;
  #answered: Answer | undefined;
  #read = 0;
  #settled = false;
  readonly #deadline: NodeJS.Timeout;

  constructor(settle: (answer: Answer) => void, timeoutMs: number) {
    this.#settle = settle;
    this.#deadline = setTimeout(() => this.#finish({ error: 'timeout' }, true), timeoutMs);
  }

  #finish(answer: Answer, abort: boolean) {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#deadline);
    this.#settle(answer);
    if (abort) this.#controller?.abort(STOPPED);
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.#controller = controller;
    // The deadline passed while the request waited for a connection.
    if (this.#settled) controller.abort(STOPPED);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders) {
    // An informational answer (1xx) is followed by the real one.
    if (status < 200) return;
    const retryAfterMs = retryAfterOf(headers['retry-after']);
    this.#answered = retryAfterMs !== undefined ? { status, retryAfterMs } : { status };
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer) {
    this.#read += chunk.length;
    if (this.#read > MAX_RESPONSE_BYTES) this.#finish(this.#answered as Answer, true);
  }

  onResponseEnd() {
    this.#finish(this.#answered ?? { error: 'connection_failed' }, false);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error) {
    this.#finish(this.#answered ?? { error: errorName(error) }, false);
  }
}

/** Why an attempt's request is aborted once it has its answer or its deadline passed (never logged). */
const STOPPED = Object.assign(new Error('attempt settled'), { code: 'NINEFOLD_SETTLED' });

/**
 * Sends webhook POSTs: keep-alive connections per receiver, redirects never followed, one overall deadline
 * per attempt (a receiver trickling its headers or body does not stretch it), and at most 64 KiB of the
 * answer read. Unless private targets are allowed, every new connection resolves its host through the
 * guarded lookup (undici hands its connect options to net.connect): the address connected to is the one checked.
 */
export const createPoster = (options: PostOptions) => {
  const lookup = options.allowPrivate ? options.lookup : guardedLookup(options.lookup);
  const agentOptions: Agent.Options = {
    connections: 16,
    pipelining: 1,
    // The attempt's own deadline bounds headers and body together; undici's per-phase timers would only add timers.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: options.timeoutMs, ...(lookup ? { lookup } : {}) },
  };
  let agent = new Agent(agentOptions);
  const targets = new Map<string, Target | undefined>();
  const targetOf = (url: string): Target | undefined => {
    if (targets.has(url)) return targets.get(url);
    let target: Target | undefined;
    try {
      const parsed = new URL(url);
      if (parsed.protocol === 'http:' || parsed.protocol === 'https:')
        target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    } catch {}
    if (targets.size >= TARGETS_KEPT) targets.clear();
    targets.set(url, target);
    return target;
  };
  const post = (url: string, headers: Record<string, string>, body: string): Promise<Answer> => {
    const target = targetOf(url);
    if (!target) return Promise.resolve({ error: 'invalid_url' });
    return new Promise((settle) => {
      const attempt = new Attempt(settle, options.timeoutMs);
      agent.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body,
        },
        attempt,
      );
    });
  };
  return {
    post,
    /** Destroys every connection, those of attempts in flight included (they settle as failed); sending goes on. */
    cut() {
      const cut = agent;
      agent = new Agent(agentOptions);
      void cut.destroy();
    },
    close() {
      void agent.destroy();
    },
  };
};
