import type { ErrorsPlan } from '../../plan/types.ts';
import { ApiError } from './api-error.ts';

export interface RenderedProblem {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string | string[]>>;
}

/** Fills a custom payload template; also builds the examples of the OpenAPI document. */
export const substitute = (template: unknown, values: Record<string, unknown>): unknown => {
  if (typeof template === 'string') {
    const whole = /^\{(\w+)\}$/.exec(template);
    if (whole?.[1] && whole[1] in values) return values[whole[1]];
    return template.replace(/\{(\w+)\}/g, (m, k: string) => (k in values ? String(values[k] ?? '') : m));
  }
  if (Array.isArray(template)) return template.map((t) => substitute(t, values));
  if (template && typeof template === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(template)) out[String(substitute(k, values))] = substitute(v, values);
    return out;
  }
  return template;
};

/** Renders errors as RFC 9457 problem details, or the spec's own payload shape. Built once per plan. */
export const createProblemRenderer = (plan: ErrorsPlan) => {
  const internal = plan.catalogue.get('internal');
  return (error: ApiError, instance?: string): RenderedProblem => {
    const entry = plan.catalogue.get(error.code) ?? internal;
    const code = plan.catalogue.has(error.code) ? error.code : 'internal';
    const status = entry?.status ?? 500;
    const title = entry?.title ?? 'Internal error';
    const problem: Record<string, unknown> = {
      type: entry?.type ?? `${plan.typeBase}${code}`,
      title,
      status,
      code,
      ...(error.detail ? { detail: error.detail } : {}),
      ...(instance ? { instance } : {}),
      ...(error.errors?.length ? { errors: error.errors } : {}),
      ...error.extensions,
    };
    if (plan.format === 'custom' && plan.payload !== undefined) {
      const body = substitute(plan.payload, { ...problem, errors: error.errors ?? [], detail: error.detail ?? title });
      return {
        status,
        contentType: 'application/json; charset=utf-8',
        body: JSON.stringify(body),
        ...(error.headers ? { headers: error.headers } : {}),
      };
    }
    return {
      status,
      contentType: 'application/problem+json; charset=utf-8',
      body: JSON.stringify(problem),
      ...(error.headers ? { headers: error.headers } : {}),
    };
  };
};

export type ProblemRenderer = ReturnType<typeof createProblemRenderer>;
export { ApiError };
