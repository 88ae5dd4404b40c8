import type { Plan, ResourcePlan } from '../../plan/types.ts';
import type { Condition } from '../../storage/index.ts';
import { code, type Inline, type Span } from '../docs-model.ts';
import { routeAccess } from './route-access.ts';
import { type EffectiveRule, effectiveRules, RECORD_ACTIONS, type RulesSpec } from './rule-defaults.ts';
import { compileRuleCondition } from './rule-sql.ts';

/** The subject the matrix evaluates rules for; shown as "the caller". */
const CALLER = '\u0000caller';
const NO_ROLE = '(no role)';

/** One action of a resource: its rule, and the roles its route asks for (none: any caller). */
interface MatrixAction {
  readonly label: string;
  readonly rule: EffectiveRule | undefined;
  readonly routeRoles: readonly string[];
}

const ROUTE_OPERATION: Record<(typeof RECORD_ACTIONS)[number], string> = {
  list: 'list',
  read: 'get',
  create: 'create',
  update: 'update',
  delete: 'delete',
};

const actionsOf = (plan: Plan, resource: ResourcePlan): MatrixAction[] => {
  const spec = (plan.spec.auth?.rules as Record<string, RulesSpec> | undefined)?.[resource.name];
  const transitions = resource.states?.transitions ?? [];
  const rules = effectiveRules(
    spec,
    transitions.map((t) => t.name),
  );
  return [
    ...RECORD_ACTIONS.map((a) => ({
      label: a,
      rule: rules?.[a],
      routeRoles: routeAccess(plan, { resource: resource.name, action: ROUTE_OPERATION[a] }).roles,
    })),
    ...transitions.map((t) => ({
      label: `transition ${t.name}`,
      rule: rules?.transitions.get(t.name),
      routeRoles: routeAccess(plan, { resource: resource.name, action: t.name, transition: true }).roles,
    })),
  ];
};

const valueText = (v: unknown): string => (v === CALLER ? 'the caller' : JSON.stringify(v));

const OPS = { eq: '=', ne: '≠', lt: '<', lte: '≤', gt: '>', gte: '≥' } as const;

/** A row condition in words: `customer = the caller`, `status in ["a"]`. */
const conditionText = (c: Condition): string => {
  switch (c.kind) {
    case 'const':
      return String(c.value);
    case 'compare':
      return `${c.field} ${OPS[c.op]} ${valueText(c.value)}`;
    case 'in':
      return `${c.field} in [${c.values.map(valueText).join(', ')}]`;
    case 'not':
      return `not (${conditionText(c.item)})`;
    default:
      return c.items
        .map((i) => (i.kind === 'and' || i.kind === 'or' ? `(${conditionText(i)})` : conditionText(i)))
        .join(` ${c.kind} `);
  }
};

/** What a caller holding only `role` (or no role) may do with one action: yes, no, or on which records. */
const cell = (resource: ResourcePlan, action: MatrixAction, role: string | undefined): Inline => {
  if (action.routeRoles.length && !(role && action.routeRoles.includes(role))) return 'no';
  if (!action.rule) return 'yes';
  const condition = compileRuleCondition(action.rule.text, resource);
  if (!condition) return ['if ', code(action.rule.text)];
  const where = condition({ principal: { subject: CALLER, roles: role ? [role] : [], scheme: '', claims: {} } });
  if (where.kind === 'const') return where.value ? 'yes' : 'no';
  return ['where ', code(conditionText(where))];
};

/**
 * What each declared role may do with each resource, rules and defaults applied: one table per resource, an
 * action per row (then the fields only some roles may see or set) and a role per column (plus a caller with no
 * role). A caller with several roles may do what any of them may.
 */
export const accessMatrix = (plan: Plan): Array<{ resource: string; columns: string[]; rows: Inline[][] }> => {
  const roles = Object.keys(plan.spec.auth?.roles ?? {});
  const columns = [NO_ROLE, ...roles];
  const fieldRows = (resource: ResourcePlan): Inline[][] =>
    resource.fields.flatMap((f) =>
      (
        [
          ['see', f.spec.readableBy],
          ['set', f.spec.writableBy],
        ] as const
      ).flatMap(([verb, allowed]) =>
        allowed?.length ? [[`${verb} ${f.name}`, ...columns.map((c) => (allowed.includes(c) ? 'yes' : 'no'))]] : [],
      ),
    );
  return plan.resources.map((resource) => ({
    resource: resource.name,
    columns: ['Action', ...columns],
    rows: [
      ...actionsOf(plan, resource).map((action) => [
        action.label,
        ...columns.map((c) => cell(resource, action, c === NO_ROLE ? undefined : c)),
      ]),
      ...fieldRows(resource),
    ],
  }));
};

/** Where an action's rule comes from, in words, for the rules table. */
export const ruleSpans = (rule: EffectiveRule): Span[] => {
  switch (rule.source) {
    case 'deny':
      return ['none: refused to everyone'];
    case 'owner':
      return [code(rule.text), ' (owner)'];
    case 'read':
      return ['as read'];
    case 'update':
      return ['as update'];
    default:
      return [code(rule.text)];
  }
};
