import { createHash } from 'node:crypto';
import type { CompareOp } from '../../spec/cel-ast.ts';
import type { ComputedQueryPlan } from './computed-cel.ts';

/**
 * A count the database keeps up to date instead of counting on every read (a counter cache, as GitHub's
 * `stargazers_count`): a column on the counted-for resource that triggers on the counted resource raise and lower
 * in the same transaction as each insert, delete or update, whichever process or code path writes.
 */
export interface TallyPlan {
  /** The column on the counted-for resource's table (`nf_tally_<hash>`: one per distinct count). */
  readonly column: string;
  /** The counted resource. */
  readonly from: string;
  /** Its field that holds the counted-for record's id (`f.article == record.id`). */
  readonly via: string;
  /** The other terms: constant comparisons the counted record must meet. */
  readonly where: ReadonlyArray<{
    readonly field: string;
    readonly op: CompareOp;
    readonly value: string | number | boolean;
  }>;
  /**
   * A count that leaves out the caller's own records (`s.user != caller`) is this tally less the records whose
   * `less` field equals the caller's value: one index probe per row instead of a walk over every counted record.
   */
  readonly less?: string;
}

/**
 * The tally a `count(...)` compiles to, when it can be kept by triggers: one term ties the counted record to this
 * record's id, and every other term compares with a constant. A count that reads the caller is per request and
 * stays a subquery, but for one shape: a single `!=` against a per-request value on a field every record holds
 * (`required`: `<>` leaves out no NULL the tally counts), which is the tally of the other terms less one probe.
 */
export const tallyOf = (
  resource: string,
  query: ComputedQueryPlan,
  required: (field: string) => boolean = () => false,
): TallyPlan | undefined => {
  if (query.kind !== 'count') return undefined;
  const links = query.terms.filter((t) => 'record' in t);
  const link = links[0];
  if (links.length !== 1 || !link || !('record' in link) || link.record !== 'id' || link.op !== 'eq') return undefined;
  const where: Array<TallyPlan['where'][number]> = [];
  let less: string | undefined;
  for (const t of query.terms) {
    if ('record' in t) continue;
    if (t.constant !== undefined) where.push({ field: t.field, op: t.op, value: t.constant });
    else if (t.op === 'ne' && less === undefined && required(t.field)) less = t.field;
    else return undefined;
  }
  // The column is the count of the other terms: a count without the `!=` term shares it.
  const key = JSON.stringify([resource, query.from, link.field, where]);
  const column = `nf_tally_${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
  return { column, from: query.from, via: link.field, where, ...(less !== undefined ? { less } : {}) };
};
