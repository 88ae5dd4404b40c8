import type { ErrorEntryPlan, ErrorsPlan } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { BUILT_IN_ERRORS } from './catalogue.ts';

export const DEFAULT_TYPE_BASE = 'https://ninefold.dev/errors/';

export const planErrors = (spec: ServiceSpec): ErrorsPlan => {
  const catalogue = new Map<string, ErrorEntryPlan>();
  for (const [code, e] of Object.entries(BUILT_IN_ERRORS)) catalogue.set(code, { code, ...e, builtIn: true });
  for (const [code, e] of Object.entries(spec.errors?.catalogue ?? {})) {
    if (!catalogue.has(code))
      catalogue.set(code, {
        code,
        status: e.status,
        title: e.title,
        ...(e.description ? { description: e.description } : {}),
        builtIn: false,
      });
  }
  return {
    format: spec.errors?.format ?? 'problem+json',
    typeBase: spec.errors?.typeBase ?? DEFAULT_TYPE_BASE,
    catalogue,
    ...(spec.errors?.payload !== undefined ? { payload: spec.errors.payload } : {}),
  };
};
