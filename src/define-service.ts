import type { CustomEndpointSpec, ResourceEndpointsSpec } from './parts/endpoints/schema.ts';
import type { WireSpec } from './parts/endpoints/wire-schema.ts';
import type { ServiceSpec } from './spec/schema.ts';

type PurposeSpec = NonNullable<ServiceSpec['service']>;

type UpperLetter =
  | 'A'
  | 'B'
  | 'C'
  | 'D'
  | 'E'
  | 'F'
  | 'G'
  | 'H'
  | 'I'
  | 'J'
  | 'K'
  | 'L'
  | 'M'
  | 'N'
  | 'O'
  | 'P'
  | 'Q'
  | 'R'
  | 'S'
  | 'T'
  | 'U'
  | 'V'
  | 'W'
  | 'X'
  | 'Y'
  | 'Z';

/**
 * Part 4 as written in TypeScript. The schema's static type drops the JSON Schema's
 * `additionalProperties` (one entry per resource), so it is restated here: resource names are
 * PascalCase, which keeps them apart from `custom` and `basePath`.
 */
export type EndpointsDefinition = {
  custom?: CustomEndpointSpec[];
  basePath?: string;
  wire?: WireSpec;
  [resource: `${UpperLetter}${string}`]: ResourceEndpointsSpec;
};

/** A service spec as `defineService` accepts it. */
export type ServiceDefinition = Omit<ServiceSpec, 'endpoints'> & { endpoints?: EndpointsDefinition };

/**
 * Declares a service in TypeScript with the spec language's types: a misspelt field type, an unknown
 * property or a wrong value fails to type-check. Returns the spec unchanged, its literal types kept.
 * The parameter is `S & ServiceDefinition` because a bare inferred `S` skips excess-property checks,
 * which would let a misspelt property name (`requird: true`) through.
 */
export const defineService = <const S extends ServiceDefinition>(spec: S & ServiceDefinition & NoExtraKeys<S>): S =>
  spec;

/** Top-level, `service` and `endpoints` keys the language does not have, refused (intersecting with `S` hides them otherwise). */
type NoExtraKeys<S> = { [K in Exclude<keyof S, keyof ServiceDefinition>]: never } & {
  service?: { [K in Exclude<keyof S[Extract<'service', keyof S>], keyof PurposeSpec>]: never };
  endpoints?: {
    [K in Exclude<
      keyof S[Extract<'endpoints', keyof S>],
      'custom' | 'basePath' | 'wire' | `${UpperLetter}${string}`
    >]: never;
  };
};
