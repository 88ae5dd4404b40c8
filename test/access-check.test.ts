import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { accessMatrix } from '../src/parts/auth/access-matrix.ts';
import { spansOf } from '../src/parts/docs-model.ts';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { planOf } from './helpers/serve-spec.ts';

const SPEC = `ninefold: 1
service: { name: s }
resources:
  Account:
    fields:
      owner: { type: string }
      plan: { type: string, writableBy: [admn] }
      flag: { type: boolean, readableBy: [staff], writableBy: [admin] }
    states:
      initial: open
      final: [closed]
      transitions:
        close: { from: open, to: closed, roles: [admin] }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  roles: { admin: All., staff: Some., member: Own. }
  rules:
    Account: { owner: owner, read: "'staff' in principal.roles || record.owner == principal.subject" }
`;

describe('writableBy in the check', () => {
  it('names a role that auth.roles does not declare, where it stands, with a suggestion', () => {
    const found = checkSource({ ...parseSpecText(SPEC, 'spec.yaml'), dir: '.' }).diagnostics;
    expect(found.map((d) => `${d.code}@${d.line}:${d.col} ${d.message}`)).toEqual([
      'unknown-role@7:42 role "admn" is not declared in auth.roles; did you mean "admin"?',
    ]);
  });
});

describe('what each role may do (document and ninefold check --access)', () => {
  const plan = planOf(SPEC.replace('[admn]', '[admin]'));
  const text = (cells: readonly unknown[]) =>
    cells.map((c) =>
      spansOf(c as never)
        .map((s) => (typeof s === 'string' ? s : 'code' in s ? s.code : s.strong))
        .join(''),
    );

  it('applies the defaults: owner rules, list as read, the transition as update behind its roles, deny elsewhere', () => {
    const [account] = accessMatrix(plan);
    expect(account?.columns).toEqual(['Action', '(no role)', 'admin', 'staff', 'member']);
    expect(account?.rows.map(text)).toEqual([
      ['list', 'where owner = the caller', 'where owner = the caller', 'yes', 'where owner = the caller'],
      ['read', 'where owner = the caller', 'where owner = the caller', 'yes', 'where owner = the caller'],
      [
        'create',
        'where owner = the caller',
        'where owner = the caller',
        'where owner = the caller',
        'where owner = the caller',
      ],
      [
        'update',
        'where owner = the caller',
        'where owner = the caller',
        'where owner = the caller',
        'where owner = the caller',
      ],
      [
        'delete',
        'where owner = the caller',
        'where owner = the caller',
        'where owner = the caller',
        'where owner = the caller',
      ],
      ['transition close', 'no', 'where owner = the caller', 'no', 'no'],
      ['set plan', 'no', 'yes', 'no', 'no'],
      ['see flag', 'no', 'no', 'yes', 'no'],
      ['set flag', 'no', 'yes', 'no', 'no'],
    ]);
  });

  it('ninefold check --access prints the same tables after the check', () => {
    const r = spawnSync(process.execPath, ['bin/ninefold.js', 'check', 'examples/orders/service.yaml', '--access'], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('no problems found');
    expect(r.stdout).toMatch(/^transition expire\s+no\s+no\s+no\s+no\s+no$/m);
    expect(r.stdout).toMatch(/^set tier\s+no\s+yes\s+no\s+yes\s+no$/m);
    expect(r.stdout).toMatch(/^Order\nAction\s+\(no role\)\s+admin\s+billing\s+support\s+customer$/m);
  });
});
