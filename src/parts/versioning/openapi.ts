import type { Plan } from '../../plan/types.ts';
import type { BuiltInOperation, OpenApiObject } from '../openapi-model.ts';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * The version parameter on every operation the version step runs on (all but the built-in pages), for the header
 * and query schemes. The document describes the shapes of one version, `shown` (/openapi/<version>.json).
 */
export const applyVersionParameter = (
  plan: Plan,
  paths: Record<string, OpenApiObject>,
  builtIns: readonly BuiltInOperation[],
  shown: string | undefined,
): void => {
  const v = plan.versioning;
  if (!v || (v.scheme !== 'header' && v.scheme !== 'query')) return;
  const pages = new Set(
    builtIns
      .filter((o) => o.kind.builtIn && o.kind.builtIn !== 'api' && o.kind.builtIn !== 'admin')
      .map((o) => `${o.method} ${o.path}`),
  );
  const parameter = {
    name: v.scheme === 'header' ? (plan.spec.versioning?.name ?? 'Api-Version') : v.name,
    in: v.scheme,
    required: false,
    description: `The API version to be served in (default ${v.fallback}); the answer's Api-Version header names it. This document shows ${shown ?? v.newest}.`,
    schema: { type: 'string', enum: [...v.ids] },
  };
  for (const [path, item] of Object.entries(paths))
    for (const method of METHODS) {
      const operation = item[method] as OpenApiObject | undefined;
      if (!operation || pages.has(`${method} ${path}`)) continue;
      const parameters = (operation.parameters as unknown[] | undefined) ?? [];
      item[method] = { ...operation, parameters: [...parameters, parameter] };
    }
};
