import { buildPlan } from '../plan/build-plan.ts';
import type { Plan } from '../plan/types.ts';
import { checkFile } from '../spec/check.ts';
import { formatDiagnostic } from '../spec/reporter.ts';

/**
 * Checks a spec file and compiles its plan. Warnings are printed and the plan is returned; on errors
 * every diagnostic is printed to stderr with a summary, and the answer is undefined (exit 1).
 */
export const loadPlanOrReport = async (file: string): Promise<Plan | undefined> => {
  const { spec, diagnostics, dir } = await checkFile(file);
  for (const d of diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
  if (!spec) {
    const errors = diagnostics.filter((d) => d.severity === 'error').length;
    process.stderr.write(`${errors} error(s), ${diagnostics.length - errors} warning(s)\n`);
    return undefined;
  }
  return buildPlan(spec, dir);
};
