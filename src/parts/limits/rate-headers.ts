import type { Rate } from '../../spec/units.ts';
import type { CellState } from './gcra.ts';

/** A policy as the RateLimit fields name it: "default", "POST /orders", "Order.create". */
export interface NamedPolicy {
  readonly name: string;
  readonly rate: Rate;
}

/** A Structured Field string (RFC 9651): quoted, with `"` and `\` escaped. */
export const sfString = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/** Whole seconds, at least 1 for a window (`w` > 0) and at least 0 for a reset. */
const seconds = (ms: number, min: number) => Math.max(min, Math.ceil(ms / 1000));

/** One item of RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers-11): `"default";q=100;w=60`. */
export const policyItem = ({ name, rate }: NamedPolicy): string =>
  `${sfString(name)};q=${rate.limit};w=${seconds(rate.windowMs, 1)}`;

/** One item of RateLimit: `"default";r=42;t=17` (remaining quota, seconds until it is whole again). */
export const stateItem = (name: string, state: CellState): string =>
  `${sfString(name)};r=${state.remaining};t=${resetSeconds(state.resetMs)}`;

/** The `t` of a RateLimit item: whole seconds until the quota is whole again. */
export const resetSeconds = (ms: number): number => seconds(ms, 0);

/** Retry-After in whole seconds, never 0 for a refusal. */
export const retryAfter = (ms: number): string => String(seconds(ms, 1));
