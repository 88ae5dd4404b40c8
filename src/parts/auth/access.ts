import type { Static } from '@sinclair/typebox';
import type { Plan, ResourcePlan } from '../../plan/types.ts';
import type { Condition, Row } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { compileGuard, type Guard } from '../states/guard.ts';
import { celPrincipal, type Principal } from './principal.ts';
import { type ConditionFor, compileRuleCondition } from './rule-sql.ts';
import type { RecordRulesSchema } from './schema.ts';

type RulesSpec = Static<typeof RecordRulesSchema>;
export type WriteAction = 'create' | 'update' | 'delete';

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
  /** Fields never shown (password hashes of a user store). */
  readonly secret: ReadonlySet<string>;
}

/**
 * The authorisation side of the auth part, compiled once: per-record rules (CEL) with the owner shortcut,
 * rules as SQL conditions for lists, and the fields each caller may read.
 */
export const createAccess = (plan: Plan, secretFields: ReadonlyMap<string, ReadonlySet<string>>) => {
  const rules = (plan.spec.auth?.rules ?? {}) as Record<string, RulesSpec>;
  const byResource = new Map<string, ResourceAccess>();
  for (const resource of plan.resources) {
    const spec = rules[resource.name] ?? {};
    const owner = spec.owner;
    const ownerRule = owner ? `record.${owner} == principal.subject` : undefined;
    const rule = (text: string | undefined) => (text ? compileGuard(text) : undefined);
    const readText = spec.read ?? ownerRule;
    const listText = spec.list ?? readText;
    byResource.set(resource.name, {
      ...(owner ? { owner } : {}),
      ...(readText ? { read: compileGuard(readText) } : {}),
      ...(listText ? { list: compileGuard(listText) } : {}),
      ...(listText ? { listCondition: compileRuleCondition(listText, resource) } : {}),
      ...(spec.create ? { create: compileGuard(spec.create) } : {}),
      explicitCreate: spec.create !== undefined,
      ...(rule(spec.update ?? ownerRule) ? { update: rule(spec.update ?? ownerRule) } : {}),
      ...(rule(spec.delete ?? ownerRule) ? { delete: rule(spec.delete ?? ownerRule) } : {}),
      transitions: new Map(Object.entries(spec.transitions ?? {}).map(([t, text]) => [t, compileGuard(text)])),
      readableBy: new Map(
        resource.fields
          .filter((f) => Array.isArray(f.spec.readableBy) && f.spec.readableBy.length > 0)
          .map((f) => [f.name, f.spec.readableBy as string[]]),
      ),
      secret: secretFields.get(resource.name) ?? new Set(),
    });
  }
  const of = (resource: ResourcePlan) => byResource.get(resource.name) as ResourceAccess;
  const vars = (principal: Principal | undefined, record: Row | Record<string, unknown>, input: unknown = {}) => ({
    principal: celPrincipal(principal),
    record,
    input,
  });

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
      const rule = of(resource)[action];
      if (rule && !rule(vars(principal, record, input))) {
        throw new ApiError('forbidden', `You may not ${action} this ${resource.name}.`);
      }
    },

    authorizeTransition(
      resource: ResourcePlan,
      transition: string,
      principal: Principal | undefined,
      record: Row,
      input: unknown,
    ) {
      const rule = of(resource).transitions.get(transition);
      if (rule && !rule(vars(principal, record, input))) {
        throw new ApiError('forbidden', `You may not ${transition} this ${resource.name}.`);
      }
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
      const roles = principal?.roles ?? [];
      const hidden = new Set(a.secret);
      for (const [field, allowed] of a.readableBy) if (!allowed.some((r) => roles.includes(r))) hidden.add(field);
      return hidden;
    },
  };
};

export type AccessControl = ReturnType<typeof createAccess>;
