import type { HandlerOutput } from './context.ts';

const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json; charset=utf-8',
});

/**
 * A 200 (or other) JSON answer, made with `new` rather than as an object literal: like the request's exchange
 * (RequestExchange, lifecycle.ts) it lives until the answer is sent, and a literal's allocation site may be
 * pretenured, after which every answer is made old and keeps its body alive until the next full collection.
 */
export class JsonAnswer implements HandlerOutput {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly headers: Readonly<Record<string, string>> = JSON_HEADERS,
  ) {}
}
