import type { Plan } from '../../src/plan/types.ts';
/** The plan of an inline spec, without a server; a spec with errors fails the test loudly. */
export declare const planOfSpec: (yaml: string) => Plan;
