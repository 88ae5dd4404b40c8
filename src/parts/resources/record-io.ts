import { randomFillSync } from 'node:crypto';
import fastJson from 'fast-json-stringify';
import { monotonicFactory } from 'ulid';
import type { ResourcePlan } from '../../plan/types.ts';
import type { Row, Store } from '../../storage/index.ts';
import { recordSchema } from './json-schema.ts';
import { uuidv7 } from './uuidv7.ts';

/**
 * The same PRNG as ulid's default (one crypto-random byte / 256 per character), but drawn from a pooled buffer:
 * the default calls crypto.getRandomValues once per character, 16 calls per id.
 */
const RANDOM_POOL = new Uint8Array(4096);
let randomAt = RANDOM_POOL.length;
const pooledRandom = (): number => {
  if (randomAt === RANDOM_POOL.length) {
    randomFillSync(RANDOM_POOL);
    randomAt = 0;
  }
  return (RANDOM_POOL[randomAt++] as number) / 256;
};

const ulid = monotonicFactory(pooledRandom);

/** Sortable ids: <prefix>_<ULID>, or a bare ULID, minted with the record's creation time (so id order is creation order). */
/** An event id: `evt_` and a ULID, so ids sort by time. */
export const newEventId = (timeMs: number): string => `evt_${ulid(timeMs)}`;

/**
 * A record's id in its resource's style, minted with the record's creation time (so id order is creation order):
 * <prefix>_<ULID> or a bare ULID, a UUIDv7, or the next number of the resource's sequence (taken in the create's
 * transaction).
 */
export const mintId = async (resource: ResourcePlan, timeMs: number, store: Pick<Store, 'sequences'>) => {
  if (resource.idStyle === 'integer') return String(await store.sequences.next(`id:${resource.table}`));
  return resource.idStyle === 'uuidv7' ? uuidv7(timeMs) : newId(resource, timeMs);
};

export const newId = (resource: Pick<ResourcePlan, 'idPrefix'>, timeMs: number): string =>
  resource.idPrefix ? `${resource.idPrefix}_${ulid(timeMs)}` : ulid(timeMs);

const ID_PATTERNS = {
  integer: '[1-9][0-9]{0,15}',
  uuidv7: '[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}',
} as const;

/** Ids this resource could have issued; anything else is answered 404 without touching storage. */
export const idPattern = (resource: ResourcePlan): RegExp =>
  resource.idStyle === 'ulid'
    ? new RegExp(`^${resource.idPrefix ? `${resource.idPrefix}_` : ''}[0-9A-HJKMNP-TV-Z]{26}$`)
    : new RegExp(`^${ID_PATTERNS[resource.idStyle]}$`);

/** Integer ids (and references to them) are kept as decimal text inside, and travel as JSON integers. */
export const numeric = (v: unknown) => (typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : v);

export const etagOf = (row: Row): string => `"r${row.revision}"`;

/** Whether an If-None-Match header names this row's revision (weak comparison, RFC 9110 §13.1.2) or is `*`. */
export const noneMatch = (header: string | string[] | undefined, row: Row): boolean => {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  const tag = `r${row.revision}`;
  return value.split(',').some((item) => item.trim().replace(/^W\//, '') === `"${tag}"`);
};

/** The revision an If-Match names; undefined for '*'; null when it cannot match (weak or foreign tags). */
export const parseIfMatch = (header: string | string[] | undefined): number | undefined | null => {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return undefined;
  const m = /^"r(\d+)"$/.exec(value.trim());
  return m ? Number(m[1]) : null;
};

/** What createRecordWriter answers: a record as clients see it, and its serialiser. */
export type RecordWriter = ReturnType<typeof compileRecordWriter>;

// A stringifier costs a few milliseconds to compile, and every handler that answers a resource's records asks for
// its writer (CRUD, lists, each transition, events, doors): one per resource plan, shared, as it holds no state.
const writers = new WeakMap<ResourcePlan, RecordWriter>();

/** Turns a stored row into what clients see, and serialises it with a schema-compiled stringifier. */
export const createRecordWriter = (resource: ResourcePlan): RecordWriter => {
  let writer = writers.get(resource);
  if (!writer) {
    writer = compileRecordWriter(resource);
    writers.set(resource, writer);
  }
  return writer;
};

const compileRecordWriter = (resource: ResourcePlan) => {
  const visible = resource.fields.filter((f) => !f.writeOnly);
  const integerId = resource.idStyle === 'integer';
  const integerRefs = new Set(visible.filter((f) => f.ref?.idStyle === 'integer').map((f) => f.name));
  const computed = resource.computed;
  // Compiled by the first record written out, not before the port opens (fast-json-stringify generates and
  // evaluates a function per resource).
  let compiled: ((value: unknown) => string) | undefined;
  const stringify = (value: unknown): string => {
    if (!compiled) compiled = fastJson(recordSchema(resource) as unknown as Parameters<typeof fastJson>[0]);
    return compiled(value);
  };
  // Same key order as the compiled stringifier writes (required system fields first), so a record reads the
  // same in a list page as on its own. Computed fields are in a row only when its query computed them for the
  // caller (never in events). Compiled to code with every field's name written out: a loop over the fields
  // loaded and stored by computed name, megamorphic accesses for every field of every record answered.
  const key = (name: string) => JSON.stringify(name);
  const body = `return (row) => {
    const out = { id: ${integerId ? 'numeric(row.id)' : 'row.id'}, createdAt: row.createdAt, updatedAt: row.updatedAt };
    let v;
    ${visible
      .map(
        (f) =>
          `v = ${integerRefs.has(f.name) ? `numeric(row[${key(f.name)}])` : `row[${key(f.name)}]`};
    if (v !== null && v !== undefined) out[${key(f.name)}] = v;${f.nullable ? ` else out[${key(f.name)}] = null;` : ''}`,
      )
      .join('\n    ')}
    ${computed.map((c) => `if (row[${key(c.name)}] !== undefined) out[${key(c.name)}] = row[${key(c.name)}];`).join('\n    ')}
    return out;
  };`;
  const toApi = new Function('numeric', body)(numeric) as (row: Row) => Record<string, unknown>;
  /** What a caller sees: `hidden` fields (readable only by other roles, secrets) left out. */
  const visibleTo = (row: Row, hidden: ReadonlySet<string>): Row => {
    if (hidden.size === 0) return row;
    const out: Row = { ...row };
    for (const name of hidden) delete out[name];
    return out;
  };
  return {
    toApi,
    serialize: (row: Row) => stringify(toApi(row)),
    stringify,
    visibleTo,
  };
};
