import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ApiError, type FieldError } from '../parts/errors/api-error.ts';
import type { FieldErrorCode } from '../parts/errors/field-codes.ts';
import { decimalRangeKeyword, type JsonSchema } from '../parts/resources/json-schema.ts';
import { compileShapeCheck, escapePointer, unknownKeyError } from './body-shape.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/** The most field errors one answer lists; `truncated: true` says more were left out (docs/errors.md). */
export const MAX_FIELD_ERRORS = 50;
/**
 * Bodies with more keys and array items than this are validated only up to their first error: with every error
 * collected, ajv's work and memory grow with the errors a body carries, and a body can carry one per value.
 */
export const MAX_VALUES_FOR_ALL_ERRORS = 2_000;

// validateSchema: the schemas are Ninefold's own, made from a checked spec; checking each against the JSON Schema
// meta-schema first compiled that meta-schema too, the dearest compile of all (~100 ms in a young process).
const configured = (allErrors: boolean): Ajv => {
  const ajv = new Ajv({
    allErrors,
    strict: false,
    coerceTypes: false,
    useDefaults: false,
    allowUnionTypes: true,
    validateSchema: false,
  });
  addFormats(ajv);
  ajv.addKeyword(decimalRangeKeyword);
  return ajv;
};

/**
 * Where a server's validators come from: one ajv, made on first use, and the compiles left for later.
 *
 * An ajv compile costs milliseconds a schema while the process is young, and a service has dozens of schemas:
 * compiled all at start-up they took a sixth of the CPU `ninefold serve` used to answer (bench/RESULTS.md). Each
 * is compiled on its first use instead (`later`), and the server compiles the rest in the background as soon as it
 * listens (`compileInBackground`), so a request that comes later finds its validator ready.
 */
export class SchemaCompiler {
  #ajv: Ajv | undefined;
  #firstErrorAjv: Ajv | undefined;
  #pending: (() => unknown)[] = [];
  readonly #bodies = new Map<string, BodyValidator>();

  /** `ajv`: one configured by the caller (tests); by default one made on first use. */
  constructor(ajv?: Ajv) {
    this.#ajv = ajv;
  }

  get ajv(): Ajv {
    this.#ajv ??= configured(true);
    return this.#ajv;
  }

  /** A twin configured the same way that stops at the first error (for bodies too large to list every error). */
  get firstErrorAjv(): Ajv {
    this.#firstErrorAjv ??= configured(false);
    return this.#firstErrorAjv;
  }

  /**
   * `compile`, run once, on the first call of the answer or by compileInBackground, whichever comes first.
   * Schemas are made by Ninefold from a checked spec, so compiling them late cannot fail where early would not.
   */
  later<T>(compile: (ajv: Ajv) => T): () => T {
    let done: { value: T } | undefined;
    const get = () => {
      done ??= { value: compile(this.ajv) };
      return done.value;
    };
    this.#pending.push(get);
    return get;
  }

  /** A body validator (compileBodyValidator), one per schema: many repeat (every transition without input takes `{}`). */
  body(schema: JsonSchema, readOnly: ReadonlySet<string> = new Set()): BodyValidator {
    const key = `${[...readOnly].join(',')}\n${JSON.stringify(schema)}`;
    let validator = this.#bodies.get(key);
    if (!validator) {
      validator = compileOne(this, schema, readOnly);
      this.#bodies.set(key, validator);
    }
    return validator;
  }

  /**
   * Compiles what `later` left, one schema per turn of the event loop: requests are answered in between. It starts
   * `afterMs` from now, so the first requests after start-up (a load balancer's health check, the first client) are
   * not queued behind the compiles; a request that needs a validator first compiles it itself.
   */
  compileInBackground(afterMs = 0): Promise<void> {
    const pending = this.#pending;
    this.#pending = [];
    return new Promise((done) => {
      const next = () => {
        const compile = pending.shift();
        if (!compile) return done();
        compile();
        setImmediate(next);
      };
      // Unref'd: a server closed before it fires is not kept alive for it.
      setTimeout(next, afterMs).unref();
    });
  }
}

const CODES: Readonly<Record<string, FieldErrorCode>> = {
  required: 'required',
  type: 'invalid_type',
  enum: 'invalid_enum',
  const: 'invalid_enum',
  format: 'invalid_format',
  pattern: 'invalid_format',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  exclusiveMinimum: 'out_of_range',
  exclusiveMaximum: 'out_of_range',
  minLength: 'invalid_length',
  maxLength: 'invalid_length',
  minItems: 'invalid_count',
  maxItems: 'invalid_count',
  uniqueItems: 'duplicate_items',
  additionalProperties: 'unknown_field',
};

const toFieldError = (e: ErrorObject): FieldError => {
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required') {
    const name = String(params.missingProperty);
    return { pointer: `#${e.instancePath}/${escapePointer(name)}`, code: 'required', message: `${name} is required` };
  }
  if (e.keyword === 'additionalProperties') return unknownKeyError(e.instancePath, String(params.additionalProperty));
  const message =
    e.keyword === 'enum'
      ? `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
      : (e.message ?? 'is invalid');
  return { pointer: `#${e.instancePath}`, code: CODES[e.keyword] ?? 'invalid', message };
};

/** Field errors found, the first `MAX_FIELD_ERRORS` of them kept, and whether they are all of the body's. */
interface Found {
  readonly errors: readonly FieldError[];
  readonly total: number;
  readonly complete: boolean;
  readonly topLevelUnknownOnly: boolean;
}

/** ajv's errors as field errors: union branches left out, duplicates merged, the first MAX_FIELD_ERRORS kept. */
const fromAjv = (raw: readonly ErrorObject[], complete: boolean): Found => {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  let total = 0;
  let topLevelUnknownOnly = true;
  for (const e of raw) {
    if (e.keyword === 'if' || e.keyword === 'anyOf') continue;
    const error = toFieldError(e);
    const key = `${error.pointer}|${error.code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    total++;
    if (e.keyword !== 'additionalProperties' || e.instancePath !== '') topLevelUnknownOnly = false;
    if (errors.length < MAX_FIELD_ERRORS) errors.push(error);
  }
  return { errors, total, complete, topLevelUnknownOnly };
};

const names = (errors: readonly FieldError[]) =>
  errors
    .slice(0, 10)
    .map((e) => (e.pointer === '#' ? '(a long key)' : e.pointer.slice(2, 66)))
    .join(', ');

/** The refusal for what was found: the right code, the count in `detail`, `truncated` when errors were left out. */
const refusal = ({ errors, total, complete, topLevelUnknownOnly }: Found): ApiError => {
  const truncated = !complete || total > errors.length;
  const extensions = truncated ? { truncated: true } : undefined;
  const listed = total > errors.length ? ` (errors lists the first ${errors.length})` : '';
  const unchecked = complete ? '' : ' Other values were not checked.';
  if (topLevelUnknownOnly) {
    const detail =
      total > 10 ? `${total} unknown fields${listed}: ${names(errors)}, …` : `Unknown field(s): ${names(errors)}.`;
    return new ApiError('unknown_field', `${detail}${unchecked}`, errors, extensions);
  }
  const range = errors[0];
  if (complete && total === 1 && range?.code === 'out_of_range' && /9007199254740991/.test(range.message))
    return new ApiError('number_out_of_range', 'An integer is outside ±(2^53−1).', errors);
  return new ApiError(
    'validation_failed',
    `${total} field(s) failed validation${listed}.${unchecked}`,
    errors,
    extensions,
  );
};

export type BodyValidator = (body: unknown) => ApiError | undefined;

/**
 * Compiles a body validator. Read-only and system fields get `read_only_field`, unknown fields
 * `unknown_field`, everything else `validation_failed` — each listing the failing fields with a pointer,
 * up to MAX_FIELD_ERRORS.
 *
 * The work done before refusing is bounded by the cap, not by the body: one pass over the body's keys and
 * arrays comes first; a large body with keys the schema cannot have or arrays over their maxItems is refused on
 * those alone, and any other large body is validated only up to its first error.
 */
export const compileBodyValidator = (
  compiler: SchemaCompiler,
  schema: JsonSchema,
  readOnly: ReadonlySet<string> = new Set(),
): BodyValidator => compiler.body(schema, readOnly);

const compileOne = (compiler: SchemaCompiler, schema: JsonSchema, readOnly: ReadonlySet<string>): BodyValidator => {
  const compiled = compiler.later((ajv) => ({ shapeOf: compileShapeCheck(schema), everyError: ajv.compile(schema) }));
  // Compiled on first use, once, and never in the background: most services never receive a body this large.
  let firstError: ValidateFunction | undefined;
  const firstErrorOnly = () => {
    firstError ??= compiler.firstErrorAjv.compile(schema);
    return firstError;
  };
  return (body) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return new ApiError('validation_failed', 'The body must be a JSON object.', [
        { pointer: '#', code: 'invalid_type', message: 'must be an object' },
      ]);
    }
    // Looked up one by one: listing the body's keys would cost as much as the body has keys.
    const locked = [...readOnly].filter((k) => Object.hasOwn(body, k));
    if (locked.length) {
      return new ApiError(
        'read_only_field',
        `These fields are set by the service and cannot be written: ${locked.join(', ')}.`,
        locked.map((k) => ({ pointer: `#/${escapePointer(k)}`, code: 'read_only', message: `${k} is read-only` })),
      );
    }
    const { shapeOf, everyError } = compiled();
    const shape = shapeOf(body, MAX_FIELD_ERRORS);
    const large = shape.values > MAX_VALUES_FOR_ALL_ERRORS;
    if (large && shape.problems > 0) {
      return refusal({
        errors: shape.errors,
        total: shape.problems,
        complete: false,
        topLevelUnknownOnly: shape.topLevelUnknownOnly,
      });
    }
    const validate = large ? firstErrorOnly() : everyError;
    if (validate(body)) return undefined;
    return refusal(fromAjv(validate.errors ?? [], !large));
  };
};
