import { accessMatrix } from '../parts/auth/access-matrix.ts';
import { type Inline, spansOf } from '../parts/docs-model.ts';
import type { Plan } from '../plan/types.ts';

const plain = (inline: Inline): string =>
  spansOf(inline)
    .map((s) => (typeof s === 'string' ? s : 'code' in s ? s.code : s.strong))
    .join('');

/** Rows as columns padded to their widest cell. */
const textTable = (rows: readonly (readonly string[])[]): string => {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
};

/** `ninefold check --access`: what each role may do with each resource, as the document's tables show it. */
export const accessReport = (plan: Plan): string =>
  accessMatrix(plan)
    .map((m) => `${m.resource}\n${textTable([m.columns, ...m.rows.map((row) => row.map(plain))])}\n`)
    .join('\n');
