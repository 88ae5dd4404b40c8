import type { Plan, ResourcePlan } from '../../plan/types.ts';
import type { Condition, Row } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { compileGuard, type Guard } from '../states/guard.ts';
import { celPrincipal, type Principal } from './principal.ts';
import { effectiveRules, type RulesSpec } from './rule-defaults.ts';
import { type ConditionFor, compileRuleCondition } from './rule-sql.ts';

export type WriteAction = 'create' | 'update' | 'delete';

/** A resource's compiled rules; undefined guards where the resource has no rules at all. */
interface ResourceAccess {
  readonly owner?: string;
  readonly read?: Guard;
  readonly list?: Guard;
  readonly listCondition?: ConditionFor;
  readonly create?: Guard;
  readonly explicitCreate: boolean;
  readonly update?: Guard;
  readonly delete?: Guard;
  readonly transitions: ReadonlyMap<string, Guard>;
  /** Fields only some roles may read: field → roles. */
  readonly readableBy: ReadonlyMap<string, readonly string[]>;
  /** Fields only some roles may write: field → roles. */
  readonly writableBy: ReadonlyMap<string, readonly string[]>;
  /** Fields never shown (password hashes of a user store). */
  readonly secret: ReadonlySet<string>;
}

/** Field → the roles a field list names under `key` (readableBy, writableBy), for the fields that have one. */
const rolesByField = (resource: ResourcePlan, key: 'readableBy' | 'writableBy') =>
  new Map(
    resource.fields.flatMap((f) => {
      const roles = f.spec[key];
      return Array.isArray(roles) && roles.length > 0 ? [[f.name, roles] as const] : [];
    }),
  );

/** The fields of `byField` whose roles the caller holds none of. */
const lacking = (byField: ReadonlyMap<string, readonly string[]>, principal: Principal | undefined) => {
  const roles = principal?.roles ?? [];
  const out = new Set<string>();
  for (const [field, allowed] of byField) if (!allowed.some((r) => roles.includes(r))) out.add(field);
  return out;
};

const compileResource = (
  resource: ResourcePlan,
  spec: RulesSpec | undefined,
  secret: ReadonlySet<string>,
): ResourceAccess => {
  const rules = effectiveRules(spec, resource.states?.transitions.map((t) => t.name) ?? []);
  const base = {
    explicitCreate: spec?.create !== undefined,
    readableBy: rolesByField(resource, 'readableBy'),
    writableBy: rolesByField(resource, 'writableBy'),
    secret,
  };
  if (!rules) return { ...base, transitions: new Map() };
  const listCondition = compileRuleCondition(rules.list.text, resource);
  return {
    ...base,
    ...(rules.owner ? { owner: rules.owner } : {}),
    read: compileGuard(rules.read.text),
    list: compileGuard(rules.list.text),
    ...(listCondition ? { listCondition } : {}),
    create: compileGuard(rules.create.text),
    update: compileGuard(rules.update.text),
    delete: compileGuard(rules.delete.text),
    transitions: new Map([...rules.transitions].map(([t, rule]) => [t, compileGuard(rule.text)])),
  };
};

/**
 * The authorisation side of the auth part, compiled once: per-record rules (CEL) with their defaults (deny by
 * default, the owner shortcut: see rule-defaults.ts), rules as SQL conditions for lists, and the fields each
 * caller may read and write.
 */
export const createAccess = (plan: Plan, secretFields: ReadonlyMap<string, ReadonlySet<string>>) => {
  const rules = (plan.spec.auth?.rules ?? {}) as Record<string, RulesSpec>;
  const byResource = new Map<string, ResourceAccess>(
    plan.resources.map((r) => [r.name, compileResource(r, rules[r.name], secretFields.get(r.name) ?? new Set())]),
  );
  const of = (resource: ResourcePlan) => byResource.get(resource.name) as ResourceAccess;
  const vars = (principal: Principal | undefined, record: Row | Record<string, unknown>, input: unknown = {}) => ({
    principal: celPrincipal(principal),
    record,
    input,
  });
  const refuse = (rule: Guard | undefined, what: string, resource: ResourcePlan, args: ReturnType<typeof vars>) => {
    if (rule && !rule(args)) throw new ApiError('forbidden', `You may not ${what} this ${resource.name}.`);
  };

  return {
    ownerOf: (resource: ResourcePlan) => of(resource).owner,
    explicitCreate: (resource: ResourcePlan) => of(resource).explicitCreate,

    /** Whether the caller may see this record at all (else the answer is 404, as for a missing one). */
    canRead(resource: ResourcePlan, principal: Principal | undefined, row: Row): boolean {
      const read = of(resource).read;
      return !read || read(vars(principal, row));
    },

    /** Throws 403 forbidden when the write rule refuses. `record` is the record as it is (or will be, on create). */
    authorize(
      resource: ResourcePlan,
      action: WriteAction,
      principal: Principal | undefined,
      record: Row | Record<string, unknown>,
      input: unknown,
    ) {
      refuse(of(resource)[action], action, resource, vars(principal, record, input));
    },

    authorizeTransition(
      resource: ResourcePlan,
      transition: string,
      principal: Principal | undefined,
      record: Row,
      input: unknown,
    ) {
      refuse(of(resource).transitions.get(transition), transition, resource, vars(principal, record, input));
    },

    /**
     * The list rule for this caller: a SQL condition when the rule compiles to one, else an in-process test
     * (the list handler then reads on until a page is full). Undefined: every row is visible.
     */
    listFilter(
      resource: ResourcePlan,
      principal: Principal | undefined,
    ): { where: Condition } | { test: (row: Row) => boolean } | undefined {
      const a = of(resource);
      if (!a.list) return undefined;
      if (a.listCondition) {
        const where = a.listCondition({ principal: celPrincipal(principal) });
        return where.kind === 'const' && where.value ? undefined : { where };
      }
      const list = a.list;
      return { test: (row) => list(vars(principal, row)) };
    },

    /** Fields this caller may not see (and so may not filter or sort on). */
    hiddenFields(resource: ResourcePlan, principal: Principal | undefined): ReadonlySet<string> {
      const a = of(resource);
      if (a.readableBy.size === 0) return a.secret;
      return new Set([...a.secret, ...lacking(a.readableBy, principal)]);
    },

    /** Fields this caller may not set (`writableBy` names none of its roles). */
    unwritableFields(resource: ResourcePlan, principal: Principal | undefined): ReadonlySet<string> {
      const a = of(resource);
      return a.writableBy.size === 0 ? NONE : lacking(a.writableBy, principal);
    },
  };
};

const NONE: ReadonlySet<string> = new Set();

export type AccessControl = ReturnType<typeof createAccess>;
