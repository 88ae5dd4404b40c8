import { describe, expect, it } from 'vitest';
import { checkSource } from '../src/spec/check.ts';
import type { Diagnostic } from '../src/spec/diagnostic-codes.ts';
import { parseSpecText } from '../src/spec/load.ts';

const check = (text: string): Diagnostic[] =>
  checkSource({ ...parseSpecText(text, 'spec.yaml'), dir: '.' }).diagnostics;
const show = (d: Diagnostic) => `${d.severity} ${d.code}@${d.line}:${d.col} ${d.message}`;

/** An order machine without a `states` list: every name its transitions use is a state. */
const machine = (transitions: string, extra = '') => `ninefold: 1
service: { name: s }
resources:
  Order:
    fields: { note: { type: string } }
    states:
      initial: cart
      final: [shipped, cancelled]
      transitions:
${transitions}${extra}`;

describe('a misspelt state with implicit states', () => {
  it('a typo in `to` is an unknown state with the name it meant, not a dead end, and the graph reads on', () => {
    const found = check(
      machine(`        place: { from: cart, to: placed }
        ship: { from: placed, to: shiped }
        cancel: { from: [cart, placed], to: cancelled }
`),
    );
    expect(found.map(show)).toEqual(['error unknown-state@11:35 no state "shiped"; did you mean "shipped"?']);
  });

  it('a typo in `from` is an unknown state with the name it meant, not an unreachable one', () => {
    const found = check(
      machine(`        place: { from: cart, to: placed }
        ship: { from: placd, to: shipped }
        cancel: { from: [cart, plaaced], to: cancelled }
`),
    );
    expect(found.map(show)).toEqual([
      'error unknown-state@11:23 no state "placd"; did you mean "placed"?',
      'error unknown-state@12:32 no state "plaaced"; did you mean "placed"?',
    ]);
  });

  it('reads the graph as the typo meant, so nothing after it is reported unreachable', () => {
    const found = check(
      machine(`        place: { from: cart, to: placed }
        pay: { from: placd, to: paid }
        ship: { from: paid, to: shipped }
        cancel: { from: cart, to: cancelled }
`),
    );
    expect(found.map(show)).toEqual(['error unknown-state@11:22 no state "placd"; did you mean "placed"?']);
  });

  it('leaves states far from any other name alone: a dead end stays a warning', () => {
    const found = check(
      machine(`        place: { from: cart, to: placed }
        hold: { from: placed, to: onHold }
        ship: { from: placed, to: shipped }
        cancel: { from: cart, to: cancelled }
`),
    );
    expect(found.map(show)).toEqual(['warning dead-end-state@11:35 "onHold" is not final but no transition leaves it']);
  });

  it('the example in docs/diagnostics.md gives the two errors it shows', () => {
    const found = check(`ninefold: 1
service: { name: s }
resources:
  Order:
    fields: { note: { type: string } }
    states:
      initial: cart
      final: [shipped]
      transitions:
        place: { from: cart, to: placed }
        pay: { from: placd, to: paid }
        ship: { from: paid, to: shiped }
`);
    expect(found.map(show)).toEqual([
      'error unknown-state@11:22 no state "placd"; did you mean "placed"?',
      'error unknown-state@12:33 no state "shiped"; did you mean "shipped"?',
    ]);
  });
});

describe('roles a transition names', () => {
  it('a role not declared in auth.roles is an error: no key could ever take the transition', () => {
    const text = machine(
      `        ship: { from: cart, to: shipped, roles: [shiper] }
        cancel: { from: cart, to: cancelled }
`,
      `auth:
  roles: { shipper: Ships orders. }
`,
    );
    expect(check(text).map(show)).toEqual([
      'error unknown-role@10:50 role "shiper" is not declared in auth.roles; did you mean "shipper"?',
    ]);
    expect(checkSource({ ...parseSpecText(text, 'spec.yaml'), dir: '.' }).spec).toBeUndefined();
  });
});
