import type { ErrorObject } from 'ajv';
// Compiled ahead of time from the schema (npm run gen; gen:check fails when it is stale): no Ajv compile at start.
import { validate } from '../../schema/ninefold-validate.mjs';
import { closest } from './closest.ts';
import type { Reporter } from './reporter.ts';

export { closest, editDistance } from './closest.ts';

export const suggestion = (word: string, options: readonly string[]): string => {
  const near = closest(word, options);
  return near ? `; did you mean "${near}"?` : '';
};

/** Checks the spec against the language's JSON Schema and reports each problem once, at its key. */
export const validateShape = (raw: unknown, reporter: Reporter): boolean => {
  if (validate(raw)) return true;
  const errors = (validate.errors ?? []) as ErrorObject[];
  // An anyOf failure explains its branches' failures: keep the anyOf, drop what sits below it.
  const anyOfPaths = errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath);
  const seen = new Set<string>();
  for (const error of errors) {
    const underAnyOf = anyOfPaths.some((p) => error.instancePath === p || error.instancePath.startsWith(`${p}/`));
    if (error.keyword !== 'anyOf' && underAnyOf) continue;
    const key = `${error.instancePath}|${error.keyword}|${JSON.stringify(error.params)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    reportError(error, reporter);
  }
  return false;
};

const reportError = (error: ErrorObject, reporter: Reporter) => {
  const path = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const allowed = Object.keys((error.parentSchema?.properties as object | undefined) ?? {});
      const pointer = `${path}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (allowed.length === 0 && error.parentSchema?.patternProperties) {
        const pattern = Object.keys(error.parentSchema.patternProperties as object)[0] ?? '';
        reporter.report(
          'invalid-name',
          pointer,
          `"${name}" is not a valid name here (it must match ${pattern})`,
          'key',
        );
      } else {
        reporter.report('unknown-property', pointer, `unknown property "${name}"${suggestion(name, allowed)}`, 'key');
      }
      return;
    }
    case 'required':
      reporter.report('missing-property', path, `missing required property "${String(params.missingProperty)}"`, 'key');
      return;
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map(String);
      const value = String(error.data);
      reporter.report(
        'invalid-value',
        path,
        `"${value}" is not one of ${allowed.join(', ')}${suggestion(value, allowed)}`,
      );
      return;
    }
    case 'const':
      reporter.report('invalid-value', path, `must be ${JSON.stringify(params.allowedValue)}`);
      return;
    case 'anyOf':
      reporter.report(
        'invalid-value',
        path,
        `${JSON.stringify(error.data)?.slice(0, 60)} is not an allowed form here${describeForms(error)}`,
      );
      return;
    case 'pattern':
      reporter.report('invalid-value', path, `"${String(error.data)}" must match ${String(params.pattern)}`);
      return;
    default:
      reporter.report('invalid-value', path, error.message ?? 'invalid value');
  }
};

const describeForms = (error: ErrorObject): string => {
  const branches = (error.schema as Array<{ type?: string; const?: unknown }> | undefined) ?? [];
  const forms = branches.map((b) => (b.const !== undefined ? JSON.stringify(b.const) : (b.type ?? 'object')));
  return forms.length ? ` (expected ${forms.join(' or ')})` : '';
};
