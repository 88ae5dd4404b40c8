import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { compileRuleCondition } from '../src/parts/auth/rule-sql.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';

const SPEC = `
ninefold: 1
service: { name: rules-test }
resources:
  Memo:
    fields:
      title: { type: string, required: true }
      team: { type: string, required: true }
      level: { type: integer, default: 0 }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { admin: All documents., member: Own team only. }
  rules:
    Memo:
      list: "'admin' in principal.roles || record.title.startsWith(principal.subject)"
      read: "'admin' in principal.roles || record.title.startsWith(principal.subject)"
      create: "'admin' in principal.roles"
endpoints:
  Memo: { operations: [list, get, create], list: { filter: [team], pageSize: { default: 3, max: 100 } } }
`;

describe('list rules as SQL', () => {
  const plan = planOf(SPEC);
  const doc = plan.resourcesByName.get('Memo');
  if (!doc) throw new Error('no Memo');
  const principal = (subject: string, roles: string[]) => ({
    principal: { subject, roles, scheme: 'key', claims: {} },
  });

  it('turns the caller-only parts into constants and record comparisons into columns', () => {
    const rule = compileRuleCondition("'admin' in principal.roles || record.team == principal.subject", doc);
    expect(rule?.(principal('red', ['admin']))).toEqual({ kind: 'const', value: true });
    expect(rule?.(principal('red', []))).toEqual({ kind: 'compare', field: 'team', op: 'eq', value: 'red' });
    const list = compileRuleCondition("record.level in [1, 2] && !(record.team != 'x')", doc);
    expect(list?.(principal('a', []))).toEqual({
      kind: 'and',
      items: [
        { kind: 'in', field: 'level', values: [1, 2] },
        { kind: 'not', item: { kind: 'compare', field: 'team', op: 'ne', value: 'x' } },
      ],
    });
  });

  it('leaves rules it cannot express in SQL to the process', () => {
    expect(compileRuleCondition('record.title.startsWith(principal.subject)', doc)).toBeUndefined();
    expect(compileRuleCondition('record.level + 1 > 2', doc)).toBeUndefined();
  });
});

describe('a list rule evaluated in the process', () => {
  let s: Served;
  let admin: Record<string, string>;
  let ann: Record<string, string>;
  beforeAll(async () => {
    s = await servePlan(planOf(SPEC));
    admin = { 'x-api-key': (await issueApiKey(s.store, { subject: 'root', roles: ['admin'] })).key };
    ann = { 'x-api-key': (await issueApiKey(s.store, { subject: 'ann', roles: ['member'] })).key };
    // 40 documents, 1 in 4 titled for ann: her pages must be full and her count exact.
    for (let i = 0; i < 40; i++) {
      const title = i % 4 === 0 ? `ann-${i}` : `other-${i}`;
      const r = await call(s.url, 'POST', '/memos', { json: { title, team: 'x' }, headers: admin });
      expect(r.status).toBe(201);
    }
  });
  afterAll(() => s.close({ remove: true }));

  it('fills every page with the caller’s rows, pages through all of them, and counts only them', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await call(s.url, 'GET', `/memos?count=true${cursor ? `&cursor=${cursor}` : ''}`, { headers: ann });
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(10);
      if (r.body.nextCursor) expect(r.body.data).toHaveLength(3);
      seen.push(...r.body.data.map((d: { title: string }) => d.title));
      cursor = r.body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toHaveLength(10);
    expect(seen.every((t) => t.startsWith('ann-'))).toBe(true);
    expect(new Set(seen).size).toBe(10);
    const all = await call(s.url, 'GET', '/memos?count=true', { headers: admin });
    expect(all.body.total).toBe(40);
  });
});
