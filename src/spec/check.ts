import { checkAuth } from '../parts/auth/check.ts';
import { checkEndpoints } from '../parts/endpoints/check.ts';
import { checkErrors } from '../parts/errors/check.ts';
import { checkEvents } from '../parts/events/check.ts';
import { checkLimits } from '../parts/limits/check.ts';
import { checkPurpose } from '../parts/purpose/check.ts';
import { checkResources } from '../parts/resources/check.ts';
import { checkStates } from '../parts/states/check.ts';
import { checkVersioning } from '../parts/versioning/check.ts';
import type { CheckContext } from './check-context.ts';
import type { Diagnostic } from './diagnostic-codes.ts';
import { type LoadedSource, loadSource } from './load.ts';
import { Reporter, sortDiagnostics } from './reporter.ts';
import type { ServiceSpec } from './schema.ts';
import { validateShape } from './validate-shape.ts';

/** The nine parts' semantic checks, in the order of the document. */
const PART_CHECKS: ReadonlyArray<(ctx: CheckContext) => void> = [
  checkPurpose,
  checkResources,
  checkStates,
  checkEndpoints,
  checkAuth,
  checkEvents,
  checkErrors,
  checkLimits,
  checkVersioning,
];

export interface CheckedSpec {
  /** Present when there are no errors (warnings allowed). */
  readonly spec?: ServiceSpec;
  readonly diagnostics: Diagnostic[];
  readonly dir: string;
  readonly file: string;
}

/** Runs every check over a loaded source and returns every problem at once. */
export const checkSource = (loaded: LoadedSource): CheckedSpec => {
  const { source, dir } = loaded;
  if (loaded.raw === undefined) return { diagnostics: loaded.diagnostics, dir, file: source.file };
  const reporter = new Reporter(source);
  reporter.diagnostics.push(...loaded.diagnostics);
  const shapeOk = validateShape(loaded.raw, reporter);
  if (typeof loaded.raw === 'object' && loaded.raw !== null) {
    const ctx: CheckContext = { spec: loaded.raw as ServiceSpec, report: reporter.report.bind(reporter) };
    for (const check of PART_CHECKS) check(ctx);
  }
  const diagnostics = sortDiagnostics(reporter.diagnostics);
  const ok = shapeOk && !reporter.hasErrors;
  return { ...(ok ? { spec: loaded.raw as ServiceSpec } : {}), diagnostics, dir, file: source.file };
};

/** Loads and checks a spec file. Never throws for a bad spec: everything wrong is in `diagnostics`. */
export const checkFile = async (path: string): Promise<CheckedSpec> => checkSource(await loadSource(path));
