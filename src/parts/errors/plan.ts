import type { ErrorEntryPlan, ErrorsPlan, ErrorWording } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { BUILT_IN_ERRORS } from './catalogue.ts';
import { ERROR_PRESETS, type ErrorPreset } from './presets.ts';

export const DEFAULT_TYPE_BASE = 'https://ninefold.dev/errors/';

const merged = <T>(...maps: Array<Readonly<Record<string, T>> | undefined>): Map<string, T> =>
  new Map(maps.flatMap((m) => Object.entries(m ?? {})));

/** The catalogue with the spec's (and its preset's) remapped statuses and titles; their wording beside it. */
export const planErrors = (spec: ServiceSpec): ErrorsPlan => {
  const format = spec.errors?.format ?? 'problem+json';
  const preset: ErrorPreset | undefined =
    format === 'problem+json' || format === 'custom' ? undefined : ERROR_PRESETS[format];
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
  // The codes older API versions answer instead (versioning `error` changes), with the status they had.
  for (const version of spec.versioning?.versions ?? [])
    for (const { error } of version.changes ?? []) {
      const now = error ? catalogue.get(error.code) : undefined;
      if (!error?.was.code || !now || catalogue.has(error.was.code)) continue;
      catalogue.set(error.was.code, { ...now, code: error.was.code, status: error.was.status ?? now.status });
    }
  const wording = new Map<string, ErrorWording>();
  for (const [code, remap] of [...Object.entries(preset?.remap ?? {}), ...Object.entries(spec.errors?.remap ?? {})]) {
    const entry = catalogue.get(code);
    if (!entry) continue;
    const { status, title, ...words } = remap as { status?: number; title?: string } & ErrorWording;
    catalogue.set(code, { ...entry, ...(status ? { status } : {}), ...(title ? { title } : {}) });
    wording.set(code, { ...wording.get(code), ...words });
  }
  const payload = format === 'problem+json' ? undefined : (spec.errors?.payload ?? preset?.payload);
  return {
    format,
    typeBase: spec.errors?.typeBase ?? DEFAULT_TYPE_BASE,
    catalogue,
    ...(payload !== undefined ? { payload } : {}),
    wording,
    fieldCodes: merged(preset?.fieldCodes, spec.errors?.fieldCodes),
    fieldMessages: merged(spec.errors?.fieldMessages),
    types: merged(preset?.types, spec.errors?.types),
    ...(spec.errors?.documentation ? { documentation: spec.errors.documentation } : {}),
  };
};
