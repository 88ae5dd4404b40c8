import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../src/emit/openapi.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkFile } from '../src/spec/check.ts';

describe('the roles of an operation', () => {
  it('are said once in its description (the auth part says them; the states part does not repeat them)', async () => {
    const file = resolve(import.meta.dirname, '../examples/orders/service.yaml');
    const { spec, dir } = await checkFile(file);
    if (!spec) throw new Error('the orders example does not check');
    const paths = buildOpenApi(buildPlan(spec, dir)).paths as Record<string, Record<string, { description?: string }>>;
    const descriptions = Object.values(paths).flatMap((item) => Object.values(item).map((op) => op.description ?? ''));
    const pay = descriptions.find((d) => d.startsWith('From placed to paid.'));
    // The limits part adds the operation's limits after the roles.
    expect(pay).toBe(
      'From placed to paid.\n\nRoles: billing.\n\nLimits: default: 100 per minute. RateLimit-Policy: `"default";q=100;w=60`.',
    );
    for (const d of descriptions) expect((d.match(/Roles:/g) ?? []).length, d).toBeLessThanOrEqual(1);
  });
});
