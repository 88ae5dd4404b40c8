import { buildPlan } from '../../src/plan/build-plan.ts';
import type { Plan } from '../../src/plan/types.ts';
import { checkSource } from '../../src/spec/check.ts';
import { parseSpecText } from '../../src/spec/load.ts';

/** The plan of an inline spec, without a server; a spec with errors fails the test loudly. */
export const planOfSpec = (yaml: string): Plan => {
  const parsed = parseSpecText(yaml, 'contract.yaml');
  const checked = checkSource({ ...parsed, dir: '.' });
  if (!checked.spec) throw new Error(JSON.stringify(checked.diagnostics));
  return buildPlan(checked.spec);
};
