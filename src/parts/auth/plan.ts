import type { Static } from '@sinclair/typebox';
import type { ServiceSpec } from '../../spec/schema.ts';
import type { AccessSchema, OperationOverrideSchema, ResourceEndpointsSpec } from '../endpoints/schema.ts';
import { machineOf, transitionMap } from '../resources/lookup.ts';
import { BUILT_IN_PAGES, type BuiltInPage } from './built-in-pages.ts';
import { DEFAULT_KEY_PREFIX, type RecordRulesSchema } from './schema.ts';
import type { SchemeSpec } from './scheme-types.ts';

/** Who may call a route: anyone, any one of some schemes, or all of some schemes at once. */
export type Access =
  | { readonly kind: 'public' }
  | { readonly kind: 'any'; readonly schemes: readonly string[] }
  | { readonly kind: 'all'; readonly schemes: readonly string[] };

/** A route's access and the roles it asks for, as served. */
export interface RouteAccess {
  readonly access: Access;
  readonly roles: readonly string[];
}

export type RulesSpec = Static<typeof RecordRulesSchema>;

/** Part 5 as served: every default of the spec's `auth` filled in, here and nowhere else. */
export interface AuthPlan {
  readonly schemes: ReadonlyMap<string, SchemeSpec>;
  /**
   * Who may call a route that says nothing more: `auth.require`; with schemes but no `require`, any of them;
   * without schemes, everyone.
   */
  readonly require: Access;
  readonly roles: ReadonlyMap<string, string>;
  readonly rules: ReadonlyMap<string, RulesSpec>;
  /** Built-in pages open to everyone (`auth.public`, default all). */
  readonly publicPages: ReadonlySet<BuiltInPage>;
  /**
   * The access of each generated and custom route: `<Resource>.<operation>` (history as `get`), `<Resource>.<transition>`,
   * and a custom endpoint's name.
   */
  readonly routes: ReadonlyMap<string, RouteAccess>;
  /** What every API key this service issues begins with: the apiKey schemes' `prefix` (default nfk_). */
  readonly keyPrefix: string;
}

type AccessSpec = Static<typeof AccessSchema>;
type Override = Static<typeof OperationOverrideSchema>;
const OPERATIONS = ['list', 'get', 'create', 'update', 'replace', 'delete'] as const;

const toAccess = (spec: AccessSpec | undefined): Access | undefined => {
  if (spec === undefined) return undefined;
  if (spec === 'public') return { kind: 'public' };
  if (Array.isArray(spec)) return { kind: 'any', schemes: spec };
  return { kind: 'all', schemes: spec.all };
};

/**
 * Resolves who may call each route. The most specific word wins: the operation's override, then the resource's
 * endpoints entry, then `auth.require`. A spec with schemes but no `require` protects every endpoint with any of
 * its schemes; a spec without schemes is public. Transitions take their resource's access and their own roles.
 */
export const planAuth = (spec: ServiceSpec): AuthPlan => {
  const auth = spec.auth;
  const schemes = new Map(Object.entries(auth?.schemes ?? {}) as Array<[string, SchemeSpec]>);
  const open = schemes.size === 0;
  const require: Access = open
    ? { kind: 'public' }
    : (toAccess(auth?.require) ?? { kind: 'any', schemes: [...schemes.keys()] });
  const of = (spec: AccessSpec | undefined) => (open ? require : (toAccess(spec) ?? require));
  const routes = new Map<string, RouteAccess>();
  const endpoints = (spec.endpoints ?? {}) as Record<string, unknown>;
  for (const [name, resource] of Object.entries(spec.resources ?? {})) {
    const entry = endpoints[name] as ResourceEndpointsSpec | undefined;
    const base = of(entry?.require);
    const overrides = (entry?.overrides ?? {}) as Partial<Record<string, Override>>;
    for (const op of OPERATIONS) {
      const override = overrides[op];
      routes.set(`${name}.${op}`, {
        access: override?.require !== undefined ? of(override.require) : base,
        roles: override?.roles ?? [],
      });
    }
    // Signing in is how a caller gets credentials: anyone may try (the failed-login limiter stands guard).
    if (entry?.session) routes.set(`${name}.signIn`, { access: { kind: 'public' }, roles: [] });
    const machine = machineOf(resource);
    if (!machine) continue;
    for (const [transition, t] of transitionMap(resource))
      routes.set(`${name}.${transition}`, {
        access: base,
        roles: Array.isArray(t.roles) ? t.roles.filter((r): r is string => typeof r === 'string') : [],
      });
  }
  for (const custom of spec.endpoints?.custom ?? [])
    routes.set(custom.name, { access: of(custom.require), roles: custom.roles ?? [] });
  return {
    schemes,
    require,
    roles: new Map(Object.entries(auth?.roles ?? {})),
    rules: new Map(Object.entries(auth?.rules ?? {})),
    publicPages: new Set(auth?.public ?? BUILT_IN_PAGES),
    routes,
    keyPrefix: [...schemes.values()].find((s) => s.type === 'apiKey' && s.prefix)?.prefix ?? DEFAULT_KEY_PREFIX,
  };
};
