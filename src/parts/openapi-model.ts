/**
 * Shared shapes of the OpenAPI 3.1 emitter. Each part's `openapi.ts` contributes components or paths;
 * `src/emit/openapi.ts` assembles them into one document.
 */

import type { RouteKind } from './auth/route-access.ts';

export type OpenApiObject = Record<string, unknown>;

/** The component sections parts contribute to. */
export interface OpenApiComponents {
  schemas: Record<string, OpenApiObject>;
  responses: Record<string, OpenApiObject>;
  parameters: Record<string, OpenApiObject>;
  headers: Record<string, OpenApiObject>;
  examples: Record<string, OpenApiObject>;
}

export const emptyComponents = (): OpenApiComponents => ({
  schemas: {},
  responses: {},
  parameters: {},
  headers: {},
  examples: {},
});

/** A `$ref` to a component: ref('schemas', 'Order') → {$ref: '#/components/schemas/Order'}. */
export const ref = (section: keyof OpenApiComponents, name: string): OpenApiObject => ({
  $ref: `#/components/${section}/${name}`,
});

/** Order → Order; customerSummary → CustomerSummary (component and operation names). */
export const pascalCase = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

/** A success response with its headers. */
export const success = (
  description: string,
  schema?: OpenApiObject,
  example?: unknown,
  headers: string[] = [],
): OpenApiObject => ({
  description,
  headers: Object.fromEntries(['X-Request-Id', ...headers].map((h) => [h, ref('headers', h)])),
  ...(schema ? { content: { 'application/json': { schema, ...(example !== undefined ? { example } : {}) } } } : {}),
});

/** A built-in route as the document shows it: where it is, what it is for access control, and its operation. */
export interface BuiltInOperation {
  readonly method: 'get' | 'post' | 'patch' | 'delete';
  /** The full path, base path included (health pages sit at the root). */
  readonly path: string;
  readonly kind: RouteKind;
  readonly operation: OpenApiObject;
}

/** What a part adds for its built-in routes: their operations and the schemas they refer to. */
export interface BuiltInApi {
  readonly operations: readonly BuiltInOperation[];
  readonly schemas: Record<string, OpenApiObject>;
}

/** A JSON request body of one schema, with an example. */
export const jsonBody = (schema: OpenApiObject, example: unknown): OpenApiObject => ({
  required: true,
  content: { 'application/json': { schema, example } },
});
