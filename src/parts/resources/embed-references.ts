import type { ResourcePlan } from '../../plan/types.ts';
import type { RuntimeContext } from '../../runtime/context.ts';
import type { Principal } from '../auth/principal.ts';
import { createWireRecord } from '../endpoints/wire-names.ts';
import { createExpansion } from './computed-runtime.ts';

/** The reference fields a resource always shows as the records they name (`embed: true`). */
export const embeddedFields = (resource: ResourcePlan): string[] =>
  resource.fields.filter((f) => f.ref?.embed).map((f) => f.name);

/** How deep embedded records embed theirs: an article's author's organisation, and no further (cycles end). */
const MAX_DEPTH = 2;

/**
 * Replaces references in answers by the records they name, as the caller may see them (the reference's view, on
 * the target's wire): one query per reference field for all the answers, whatever their number. A record shown so
 * shows its own embedded references too. A record the caller may not read stays an id.
 */
export const createReferenceEmbedder = (ctx: RuntimeContext, resource: ResourcePlan) => {
  const expand = createExpansion(ctx, resource);
  const wireRecords = new Map(ctx.plan.resources.map((r) => [r.name, createWireRecord(r)]));
  const nested = new Map<string, Embedder>();
  const nestedOf = (to: ResourcePlan): Embedder | undefined => {
    if (embeddedFields(to).length === 0) return undefined;
    const found = nested.get(to.name) ?? createReferenceEmbedder(ctx, to);
    nested.set(to.name, found);
    return found;
  };
  const embed: Embedder = async (answers, names, principal, depth = 0) => {
    for (const name of names) {
      const ids = new Set<string>();
      for (const answer of answers) {
        const v = answer[name];
        // Integer ids (and references to them) are numbers in the answer and text in storage.
        if (typeof v === 'string' || typeof v === 'number') ids.add(String(v));
      }
      const targets = await expand(name, [...ids], principal);
      if (!targets) continue;
      const to = ctx.plan.resourcesByName.get(resource.fieldsByName.get(name)?.ref?.to ?? '');
      const inner = to && depth + 1 < MAX_DEPTH ? nestedOf(to) : undefined;
      if (to && inner) await inner([...targets.values()], embeddedFields(to), principal, depth + 1);
      const targetWire = to ? wireRecords.get(to.name) : undefined;
      const plain = to?.wire.plain !== false;
      for (const answer of answers) {
        const value = answer[name];
        const target = typeof value === 'string' || typeof value === 'number' ? targets.get(String(value)) : undefined;
        if (target) answer[name] = plain || !targetWire ? target : targetWire(target);
      }
    }
  };
  return embed;
};

type Embedder = (
  answers: ReadonlyArray<Record<string, unknown>>,
  names: readonly string[],
  principal: Principal | undefined,
  depth?: number,
) => Promise<void>;
