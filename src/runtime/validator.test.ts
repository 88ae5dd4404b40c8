import type { Ajv, ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '../parts/resources/json-schema.ts';
import { compileShapeCheck } from './body-shape.ts';
import { compileBodyValidator, MAX_FIELD_ERRORS, MAX_VALUES_FOR_ALL_ERRORS, SchemaCompiler } from './validator.ts';

const SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    short: { type: ['array', 'null'], items: { type: 'string' }, maxItems: 5 },
    lines: {
      type: 'array',
      items: { type: 'object', properties: { qty: { type: 'integer' } }, additionalProperties: false },
    },
  },
  additionalProperties: false,
};

/** A compiler whose ajv's every-error validators count their calls and the errors they collect: the work they do. */
const countingCompiler = () => {
  const real = new SchemaCompiler().ajv;
  const work = { calls: 0, errors: 0 };
  const ajv = Object.create(real) as Ajv;
  ajv.compile = ((schema: JsonSchema) => {
    const validate = real.compile(schema);
    const counted = ((data: unknown) => {
      work.calls++;
      const ok = validate(data);
      counted.errors = validate.errors;
      work.errors += validate.errors?.length ?? 0;
      return ok;
    }) as ValidateFunction;
    return counted;
  }) as Ajv['compile'];
  return { compiler: new SchemaCompiler(ajv), work };
};

const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 1]));

describe('compileBodyValidator bounds its work by the error cap, not by the body', () => {
  it('85,000 unknown keys: refused on the shape pass, ajv never collects an error', () => {
    const { compiler, work } = countingCompiler();
    const error = compileBodyValidator(compiler, SCHEMA)({ name: 'x', ...keys(85_000) });
    expect(error?.code).toBe('unknown_field');
    expect(error?.errors).toHaveLength(MAX_FIELD_ERRORS);
    expect(error?.extensions).toEqual({ truncated: true });
    expect(work).toEqual({ calls: 0, errors: 0 });
  });

  it('a large body of wrong items is validated to its first error only', () => {
    const { compiler, work } = countingCompiler();
    const error = compileBodyValidator(compiler, SCHEMA)({ tags: Array.from({ length: 100_000 }, () => 1) });
    expect(error?.errors).toEqual([{ pointer: '#/tags/0', code: 'invalid_type', message: 'must be string' }]);
    expect(work).toEqual({ calls: 0, errors: 0 });
  });

  it('a body at the limit still gets every error (each counted), the first 50 listed', () => {
    const { compiler, work } = countingCompiler();
    const error = compileBodyValidator(
      compiler,
      SCHEMA,
    )({ tags: Array.from({ length: MAX_VALUES_FOR_ALL_ERRORS - 1 }, () => 1) });
    expect(work).toEqual({ calls: 1, errors: MAX_VALUES_FOR_ALL_ERRORS - 1 });
    expect(error?.errors).toHaveLength(MAX_FIELD_ERRORS);
    expect(error?.detail).toContain(String(MAX_VALUES_FOR_ALL_ERRORS - 1));
  });

  it('a valid body is validated once and passes', () => {
    const { compiler, work } = countingCompiler();
    expect(compileBodyValidator(compiler, SCHEMA)({ name: 'x', short: null, lines: [{ qty: 1 }] })).toBeUndefined();
    expect(work.calls).toBe(1);
  });
});

describe('compileShapeCheck', () => {
  const shape = compileShapeCheck(SCHEMA);

  it('counts the keys and items a validator would check, keeping at most `cap` errors', () => {
    const report = shape({ name: 'x', tags: ['a', 'b'], lines: [{ qty: 1, q: 2 }, { r: 3 }], zz: 1 }, 2);
    expect(report.values).toBe(4 + 2 + 2 + 3);
    expect(report.problems).toBe(3);
    expect(report.errors.map((e) => e.pointer)).toEqual(['#/lines/0/q', '#/lines/1/r']);
    expect(report.topLevelUnknownOnly).toBe(false);
  });

  it('an array over its maxItems is one problem, and its items are not walked', () => {
    const report = shape({ short: Array.from({ length: 1000 }, () => ({ a: 1 })) }, 50);
    expect(report.problems).toBe(1);
    expect(report.errors).toEqual([
      { pointer: '#/short', code: 'invalid_count', message: 'must NOT have more than 5 items' },
    ]);
  });

  it('keys named like Object.prototype members are unknown, not found on the prototype', () => {
    const report = shape(JSON.parse('{"toString":1,"constructor":2,"hasOwnProperty":3}'), 50);
    expect(report.problems).toBe(3);
    expect(report.topLevelUnknownOnly).toBe(true);
  });
});

describe('SchemaCompiler', () => {
  it('compiles a validator on its first use, or all of them in the background, once', async () => {
    const compiles: string[] = [];
    const compiler = new SchemaCompiler();
    const first = compiler.later(() => compiles.push('first'));
    compiler.later(() => compiles.push('second'));
    expect(compiles).toEqual([]);
    first();
    expect(compiles).toEqual(['first']);
    await compiler.compileInBackground();
    first();
    expect(compiles).toEqual(['first', 'second']);
  });

  it('a body validator is compiled once per schema', () => {
    const compiler = new SchemaCompiler();
    expect(compileBodyValidator(compiler, SCHEMA)).toBe(compileBodyValidator(compiler, { ...SCHEMA }));
  });
});
