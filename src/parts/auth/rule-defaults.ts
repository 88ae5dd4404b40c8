import type { Static } from '@sinclair/typebox';
import type { RecordRulesSchema } from './schema.ts';

export type RulesSpec = Static<typeof RecordRulesSchema>;
export const RECORD_ACTIONS = ['list', 'read', 'create', 'update', 'delete'] as const;
export type RecordAction = (typeof RECORD_ACTIONS)[number];

/**
 * Where an action's rule comes from: the spec (`rule`), the owner shortcut (`owner`), the read rule (a list
 * without its own), the update rule (a transition without its own), or nowhere (`deny`: refused to everyone).
 */
export type RuleSource = 'rule' | 'owner' | 'read' | 'update' | 'deny';

export interface EffectiveRule {
  /** The CEL expression the action runs under. */
  readonly text: string;
  readonly source: RuleSource;
}

/** Every action of one resource with its rule, defaults applied. */
export interface EffectiveRules extends Readonly<Record<RecordAction, EffectiveRule>> {
  readonly owner?: string;
  readonly transitions: ReadonlyMap<string, EffectiveRule>;
}

const DENY: EffectiveRule = { text: 'false', source: 'deny' };

/**
 * The rules of a resource with `auth.rules.<Resource>`, defaults applied: deny by default. An action without a
 * rule is refused unless the owner shortcut gives it one (`record.<owner> == principal.subject` for read, create,
 * update and delete); list falls back to read and a transition to update. Undefined for a resource without rules:
 * anyone the route lets in may do anything.
 */
export const effectiveRules = (
  spec: RulesSpec | undefined,
  transitions: readonly string[],
): EffectiveRules | undefined => {
  if (!spec) return undefined;
  const owner: EffectiveRule | undefined = spec.owner
    ? { text: `record.${spec.owner} == principal.subject`, source: 'owner' }
    : undefined;
  const given = (text: string | undefined, fallback: EffectiveRule | undefined): EffectiveRule =>
    text !== undefined ? { text, source: 'rule' } : (fallback ?? DENY);
  const read = given(spec.read, owner);
  const update = given(spec.update, owner);
  return {
    ...(spec.owner ? { owner: spec.owner } : {}),
    list: given(spec.list, read.source === 'deny' ? DENY : { text: read.text, source: 'read' }),
    read,
    create: given(spec.create, owner),
    update,
    delete: given(spec.delete, owner),
    transitions: new Map(
      transitions.map((t) => {
        const own = spec.transitions?.[t];
        return [t, given(own, update.source === 'deny' ? DENY : { text: update.text, source: 'update' })];
      }),
    ),
  };
};
