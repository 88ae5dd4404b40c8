import type { ErrorsPlan } from '../../plan/types.ts';
import { ApiError, type FieldError } from './api-error.ts';
import { renderTemplate, type TemplateField } from './payload-template.ts';

export interface RenderedProblem {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string | string[]>>;
}

/** Where an error happened: the request path, and the resource of the route (and its envelope) when it has one. */
export interface ProblemContext {
  readonly instance?: string;
  readonly resource?: string;
  readonly envelope?: string;
}

/** `#/user/lines/0/qty` → `lines.0.qty` (envelope user): the name a payload files a failing field under. */
const fieldName = (pointer: string, envelope: string | undefined): string => {
  const segments = pointer
    .replace(/^#\/?/, '')
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (envelope && segments[0] === envelope && segments.length > 1) segments.shift();
  return segments.join('.');
};

/**
 * The one renderer of every error the server answers: RFC 9457 problem details, or the payload the errors part
 * declares (a preset or a custom template), with the spec's remapped statuses, titles and messages. Built once.
 */
export const createProblemRenderer = (plan: ErrorsPlan) => {
  const internal = plan.catalogue.get('internal');
  const templated = plan.format !== 'problem+json' && plan.payload !== undefined;
  const fieldCode = (code: string) => plan.fieldCodes.get(code) ?? plan.fieldCodes.get('*') ?? code;
  const typeOf = (code: string, status: number) =>
    plan.wording.get(code)?.type ??
    plan.types.get(code) ??
    plan.types.get(`${String(status)[0]}xx`) ??
    `${plan.typeBase}${code}`;

  return (error: ApiError, where?: string | ProblemContext): RenderedProblem => {
    const context: ProblemContext = typeof where === 'string' ? { instance: where } : (where ?? {});
    const entry = plan.catalogue.get(error.code) ?? internal;
    const code = plan.catalogue.has(error.code) ? error.code : 'internal';
    const status = (code === error.code ? error.status : undefined) ?? entry?.status ?? 500;
    const title = entry?.title ?? 'Internal error';
    const wording = plan.wording.get(code);
    const detail = wording?.message ?? error.detail;
    const fieldErrors: FieldError[] | undefined =
      wording?.message || plan.fieldMessages.size
        ? error.errors?.map((e) => ({
            ...e,
            message: plan.fieldMessages.get(e.code) ?? wording?.message ?? e.message,
          }))
        : error.errors?.slice();
    const headers = error.headers ? { headers: error.headers } : {};
    if (!templated) {
      const problem: Record<string, unknown> = {
        type: entry?.type ?? `${plan.typeBase}${code}`,
        title,
        status,
        code,
        ...(detail ? { detail } : {}),
        ...(context.instance ? { instance: context.instance } : {}),
        ...(fieldErrors?.length ? { errors: fieldErrors } : {}),
        ...error.extensions,
      };
      return {
        status,
        contentType: 'application/problem+json; charset=utf-8',
        body: JSON.stringify(problem),
        ...headers,
      };
    }
    const fields: TemplateField[] = (fieldErrors ?? []).map((e) => ({
      field: fieldName(e.pointer, context.envelope) || (wording?.field ?? ''),
      pointer: e.pointer,
      code: fieldCode(e.code),
      message: e.message,
    }));
    // An error the spec says is about one field reads as that field failing (sign-in: "email or password").
    if (fields.length === 0 && wording?.field)
      fields.push({ field: wording.field, pointer: '', code: fieldCode(code), message: detail ?? title });
    const field =
      fields[0]?.field ||
      wording?.field ||
      (typeof error.extensions?.field === 'string' ? error.extensions.field : undefined);
    const values = {
      code,
      status,
      title,
      detail: detail ?? title,
      message: detail ?? title,
      type: typeOf(code, status),
      instance: context.instance ?? '',
      resource: context.resource ?? '',
      field: field ?? '',
      param: field ?? '',
      documentation: plan.documentation?.replaceAll('{code}', code) ?? '',
      errors: fieldErrors ?? [],
    };
    const body = renderTemplate(plan.payload, values, fields);
    return { status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(body), ...headers };
  };
};

export type ProblemRenderer = ReturnType<typeof createProblemRenderer>;
export { ApiError };
