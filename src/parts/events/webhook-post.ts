import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
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

const retryAfterOf = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
};

const errorName = (error: NodeJS.ErrnoException): string =>
  error.code === 'EBLOCKED'
    ? 'blocked_destination'
    : error.code === 'ETIMEDOUT'
      ? 'timeout'
      : (error.code ?? 'connection_failed');

/**
 * Sends webhook POSTs: keep-alive connections per receiver, redirects never followed, one overall deadline
 * per attempt (a receiver trickling its headers or body does not stretch it), and at most 64 KiB of the
 * answer read. Unless private targets are allowed, every new connection resolves its host through the
 * guarded lookup: the address connected to is the one checked.
 */
export const createPoster = (options: PostOptions) => {
  const lookup = options.allowPrivate ? options.lookup : guardedLookup(options.lookup);
  const agentOptions = { keepAlive: true, maxSockets: 16, ...(lookup ? { lookup } : {}) };
  const agents = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };
  const post = (url: string, headers: Record<string, string>, body: string): Promise<Answer> =>
    new Promise((resolve) => {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return resolve({ error: 'invalid_url' });
      }
      const https = target.protocol === 'https:';
      let settled = false;
      const finish = (answer: Answer) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(answer);
      };
      const req = (https ? httpsRequest : httpRequest)(target, {
        method: 'POST',
        agent: https ? agents.https : agents.http,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      });
      const deadline = setTimeout(() => {
        finish({ error: 'timeout' });
        req.destroy();
      }, options.timeoutMs);
      // Once the status line and headers are in, they are the answer, even if the connection breaks in the body.
      let answered: Answer | undefined;
      req.on('response', (res) => {
        let read = 0;
        const status = res.statusCode ?? 0;
        const retryAfterMs = retryAfterOf(res.headers['retry-after'] as string | undefined);
        answered = { status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
        const done = () => finish(answered as Answer);
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      });
      req.on('error', (error: NodeJS.ErrnoException) => finish(answered ?? { error: errorName(error) }));
      req.end(body);
    });
  return {
    post,
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
};
