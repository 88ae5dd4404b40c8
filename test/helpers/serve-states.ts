import { buildPlan } from '../../src/plan/build-plan.ts';
import type { Plan } from '../../src/plan/types.ts';
import { checkFile } from '../../src/spec/check.ts';
import { call, planOf, type Served, type ServeOptions, servePlan as serveAnyPlan } from './serve-spec.ts';

/** Checks a spec file (examples/…); any error diagnostic fails the test loudly. */
export const planOfFile = async (path: string): Promise<Plan> => {
  const checked = await checkFile(path);
  const errors = checked.diagnostics.filter((d) => d.severity === 'error');
  if (!checked.spec || errors.length) {
    throw new Error(`${path} has errors:\n${errors.map((d) => `${d.code} ${d.pointer}: ${d.message}`).join('\n')}`);
  }
  return buildPlan(checked.spec, checked.dir);
};

/** Serves a plan with a fast timer poll, so timed transitions show quickly. */
export const servePlan = (plan: Plan, opts: ServeOptions = {}): Promise<Served> =>
  serveAnyPlan(plan, { ...opts, timerPollMs: opts.timerPollMs ?? 100 });

export const serveStates = (yaml: string, opts: ServeOptions = {}) => servePlan(planOf(yaml), opts);

/** The record's transition history, oldest first. */
export const historyOf = async (url: string, path: string) => {
  const r = await call(url, 'GET', `${path}/history`);
  if (r.status !== 200) throw new Error(`GET ${path}/history answered ${r.status}: ${r.text}`);
  return r.body.data as Array<{
    transition: string;
    from: string;
    to: string;
    at: string;
    input: unknown;
    actor: string;
  }>;
};

/**
 * The plan without its rate limits: for suites about other parts, which call faster than the order desk allows
 * (`POST /orders` 10/s in real time would refuse a fast loop now and then). test/limits-*.test.ts cover the limits.
 */
export const withoutRateLimits = (plan: Plan): Plan => {
  const { rate: _rate, ...limits } = plan.limits;
  return { ...plan, limits };
};
