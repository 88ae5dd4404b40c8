import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { HandlerInput, HandlerOutput } from './context.ts';

type Encoding = 'br' | 'gzip' | 'identity';

const compressors: Record<Exclude<Encoding, 'identity'>, (body: Buffer) => Promise<Buffer>> = {
  // Quality 6: within a few percent of the best ratio at a tenth of the time, once per page, off the event loop.
  br: (body) =>
    promisify(brotliCompress)(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 6, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
  gzip: (body) => promisify(gzip)(body),
};

/** The encoding to send: brotli, then gzip, when Accept-Encoding offers it (a `q=0` refuses), else none. */
export const chooseEncoding = (accept: string | string[] | undefined): Encoding => {
  const offered = new Set<string>();
  for (const part of (Array.isArray(accept) ? accept.join(',') : (accept ?? '')).split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    if (name && (q === undefined || Number(q) > 0)) offered.add(name);
  }
  if (offered.has('br')) return 'br';
  if (offered.has('gzip') || offered.has('*')) return 'gzip';
  return 'identity';
};

/** Whether If-None-Match names one of the page's tags (weak comparison, as RFC 9110 asks for GET). */
const matches = (ifNoneMatch: string | string[] | undefined, tags: readonly string[]): boolean => {
  if (ifNoneMatch === undefined) return false;
  const given = (Array.isArray(ifNoneMatch) ? ifNoneMatch.join(',') : ifNoneMatch).split(',').map((t) => t.trim());
  return given.includes('*') || given.some((t) => tags.includes(t.replace(/^W\//, '')));
};

/** A page as rendered: its text and the headers it is sent with (its type, its CSP). */
export interface PageText {
  readonly text: string;
  readonly headers: Readonly<Record<string, string>>;
}

interface Rendered {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  readonly hash: string;
  readonly encoded: Map<Encoding, Promise<Buffer>>;
}

/**
 * A built-in page (the documents, the reference page and its script) rendered on its first request and kept, with an
 * ETag and its gzip and brotli forms, each made once when first asked for. A request whose If-None-Match names the
 * page is answered 304 without a body. Pages are `no-cache`: a browser keeps them and asks again with the ETag;
 * a page that needed credentials is `private`.
 */
export const cachedPage = (
  render: () => PageText | Promise<PageText>,
): ((input: HandlerInput) => Promise<HandlerOutput>) => {
  let rendered: Promise<Rendered> | undefined;
  const renderOnce = () => {
    rendered ??= Promise.resolve(render()).then(({ text, headers }) => {
      const body = Buffer.from(text, 'utf8');
      const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
      return { headers, body, hash, encoded: new Map() };
    });
    return rendered;
  };
  return async (input) => {
    const page = await renderOnce();
    const encoding = chooseEncoding(input.headers['accept-encoding']);
    const tag = (e: Encoding) => `"${page.hash}${e === 'identity' ? '' : `-${e}`}"`;
    const common = {
      ...page.headers,
      etag: tag(encoding),
      vary: 'accept-encoding',
      'cache-control': input.principal ? 'private, no-cache' : 'no-cache',
    };
    if (matches(input.headers['if-none-match'], [tag('identity'), tag('gzip'), tag('br')])) {
      return { status: 304, headers: common, takeOver: (reply) => void reply.send() };
    }
    let body = page.body;
    if (encoding !== 'identity') {
      const pending = page.encoded.get(encoding) ?? compressors[encoding](page.body);
      page.encoded.set(encoding, pending);
      body = await pending;
    }
    return {
      status: 200,
      headers: encoding === 'identity' ? common : { ...common, 'content-encoding': encoding },
      takeOver: (reply) => void reply.send(body),
    };
  };
};
