import { expect } from 'vitest';
import { LEAKS } from './serve-spec.ts';

/** One small spec for the RELIABILITY §2.1 bad-input suites. */
export const BAD_INPUT_SPEC = `
ninefold: 1
service: { name: hostile, title: Hostile input, purpose: RELIABILITY 2.1 bad input over real HTTP. }
resources:
  User:
    idPrefix: usr
    fields:
      name: { type: string, maxLength: 50, required: true }
      role: { type: enum, values: [user, admin], default: user }
      age: { type: integer }
      active: { type: boolean }
      born: { type: date }
      tags: { type: array, items: { type: string } }
      data: { type: json }
      handle: { type: string, unique: true }
      price: { type: decimal }
      password: { type: string, writeOnly: true }
endpoints:
  User:
    operations: [list, get, create, update]
    path: /users
    list: { filter: [name, role], sort: [name, createdAt], pageSize: { default: 10, max: 50 } }
`;

/** A problem answer: the status, the code, problem+json, and nothing internal in the text. */
export const expectProblem = (
  r: { status: number; text: string; headers?: Headers },
  status: number,
  code?: string,
): void => {
  expect(r.status, r.text.slice(0, 300)).toBe(status);
  expect(r.text).not.toMatch(LEAKS);
  if (code) expect(JSON.parse(r.text).code).toBe(code);
  if (r.headers) expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
};
