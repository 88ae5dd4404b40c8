import { describe, expect, it } from 'vitest';
import type { Row, Store } from '../../src/storage/index.ts';
import { StoreError } from '../../src/storage/index.ts';
import type { Backend } from './backend.ts';
import { planOfSpec } from './plan.ts';

const spec = (fields: string, extra = '') => `
ninefold: 1
service: { name: migrations }
resources:
  Thing:
    fields:
${fields}
${extra}
`;
const STATES = `    states:
      field: status
      initial: draft
      states: { draft: {}, placed: {}, shipped: { final: true } }
      transitions:
        place: { from: draft, to: placed }
        ship: { from: placed, to: shipped }`;

let seq = 0;
const thing = (values: Record<string, unknown>): Row => {
  seq++;
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString();
  return { id: `thg_${String(seq).padStart(6, '0')}`, createdAt: at, updatedAt: at, revision: 1, ...values };
};

/**
 * Migrations, as a restart sees them: a database migrated to one spec and written, closed, then opened and
 * migrated to the next. What a change does to stored values is the same on every backend.
 */
export const migrationContract = (name: string, backend: Backend) => {
  describe(`Store contract: ${name}, migrations`, () => {
    /** A database at `yaml` holding `rows`, closed again. */
    const seeded = async (yaml: string, rows: Row[]) => {
      const database = backend.create();
      const store = backend.open(database);
      await store.migrate(planOfSpec(yaml));
      for (const row of rows) await store.insert('Thing', row);
      await store.close();
      return database;
    };
    /** Opens the database at `yaml`: the store, or the refusal (the store then closed). */
    const reopen = async (database: string, yaml: string, allowDataLoss = false) => {
      const store = backend.open(database);
      const outcome = await store.migrate(planOfSpec(yaml), { allowDataLoss }).catch((e: unknown) => e);
      if (outcome instanceof Error) {
        await store.close();
        expect(outcome).toBeInstanceOf(StoreError);
        expect((outcome as StoreError).kind).toBe('migration-refused');
        return { refused: outcome.message };
      }
      return { store, report: outcome as Awaited<ReturnType<Store['migrate']>> };
    };
    const opened = async (database: string, yaml: string, allowDataLoss = false) => {
      const { store, report, refused } = await reopen(database, yaml, allowDataLoss);
      if (!store) throw new Error(`refused:\n${refused}`);
      return { store, report };
    };

    it('a widening converts what is stored: integer → number and decimal, string and boolean → json', async () => {
      const old = thing({ n: 3, d: 7, s: 'hello', b: true });
      const database = await seeded(
        spec(`      n: { type: integer }
      d: { type: integer, unique: true }
      s: { type: string }
      b: { type: boolean }`),
        [old],
      );
      const { store, report } = await opened(
        database,
        spec(`      n: { type: number }
      d: { type: decimal, scale: 2, unique: true }
      s: { type: json }
      b: { type: json }`),
      );
      expect(report.changed).toEqual([
        'Thing.n: integer → number',
        'Thing.d: integer → decimal',
        'Thing.s: string → json',
        'Thing.b: boolean → json',
      ]);
      expect(await store.get('Thing', old.id)).toEqual({ ...old, d: '7' });
      const fresh = thing({ n: 2.5, d: '19.99', s: { a: [1] }, b: [true] });
      await store.insert('Thing', fresh);
      expect(await store.get('Thing', fresh.id)).toEqual(fresh);
      const duplicate = await store.insert('Thing', thing({ d: '7' })).catch((e: unknown) => e);
      expect((duplicate as StoreError).kind).toBe('unique');
      await store.close();
    });

    it('number → integer is refused while a value is not whole; with allowDataLoss halves round away from zero', async () => {
      const rows = [thing({ n: 2.5 }), thing({ n: -2.5 }), thing({ n: 4 }), thing({ n: null })];
      const wide = spec('      n: { type: number }');
      const narrow = spec('      n: { type: integer }');
      const database = await seeded(wide, rows);
      const { refused } = await reopen(database, narrow);
      expect(refused).toContain('Thing.n changes type from number to integer; 2 stored value(s) are not whole numbers');
      expect(refused).toContain('--allow-data-loss rounds them');

      const untouched = await opened(database, wide);
      expect((await untouched.store.get('Thing', rows[0]?.id as string))?.n).toBe(2.5);
      await untouched.store.close();

      const { store, report } = await opened(database, narrow, true);
      expect(report.changed).toEqual(['Thing.n: number → integer, 2 value(s) changed']);
      const after = await store.getMany(
        'Thing',
        rows.map((r) => r.id),
      );
      expect(after.map((r) => [r.n, r.revision])).toEqual([
        [3, 2],
        [-3, 2],
        [4, 1],
        [null, 1],
      ]);
      await store.close();
    });

    it('a value no integer can hold is refused even with allowDataLoss', async () => {
      const database = await seeded(spec('      d: { type: decimal, precision: 30 }'), [
        thing({ d: '12345678901234567890.5' }),
      ]);
      const { refused } = await reopen(database, spec('      d: { type: integer }'), true);
      expect(refused).toContain('Thing.d changes type from decimal to integer; 1 stored value(s) lie beyond ±(2^53−1)');
      expect(refused).toContain('refused even with --allow-data-loss');
    });

    it('a rewrite that makes two values of a unique field equal is refused', async () => {
      const database = await seeded(spec('      n: { type: number, unique: true }'), [
        thing({ n: 1.2 }),
        thing({ n: 1.4 }),
      ]);
      const { refused } = await reopen(database, spec('      n: { type: integer, unique: true }'), true);
      expect(refused).toContain(
        'Thing.n must be unique, and after the change two or more records would hold the same value',
      );
    });

    /** Whether the store takes a second record with these values (a unique index refuses it as a conflict). */
    const takes = async (store: Store, values: Record<string, unknown>) => {
      const error = await store.insert('Thing', thing(values)).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (error === undefined) return true;
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).kind).toBe('unique');
      return false;
    };

    it('a field made unique is enforced from then on; made unique over equal values it is refused, naming the field', async () => {
      const database = await seeded(spec('      n: { type: integer }\n      m: { type: integer }'), [
        thing({ n: 1, m: 5 }),
        thing({ n: 2, m: 5 }),
      ]);
      const { refused } = await reopen(
        database,
        spec('      n: { type: integer }\n      m: { type: integer, unique: true }'),
      );
      expect(refused).toContain('Thing.m must be unique');
      const { store } = await opened(
        database,
        spec('      n: { type: integer, unique: true }\n      m: { type: integer }'),
      );
      expect(await takes(store, { n: 1, m: 6 })).toBe(false);
      expect(await takes(store, { n: 3, m: 6 })).toBe(true);
      await store.close();
    });

    it('a field no longer unique takes equal values again', async () => {
      const database = await seeded(spec('      n: { type: integer, unique: true }'), [thing({ n: 1 })]);
      const { store } = await opened(database, spec('      n: { type: integer }'));
      expect(await takes(store, { n: 1 })).toBe(true);
      await store.close();
    });

    it('a declared index turned unique is enforced, turned back it is not; one over equal values is refused', async () => {
      const fields = '      n: { type: integer }\n      m: { type: integer }';
      const index = (unique: boolean, name = '') =>
        spec(
          fields,
          `    indexes: [{ fields: [n, m]${unique ? ', unique: true' : ''}${name ? `, name: ${name}` : ''} }]`,
        );
      const database = await seeded(index(false), [thing({ n: 1, m: 1 })]);
      let { store } = await opened(database, index(true));
      expect(await takes(store, { n: 1, m: 1 })).toBe(false);
      expect(await takes(store, { n: 1, m: 2 })).toBe(true);
      await store.close();
      ({ store } = await opened(database, index(false)));
      expect(await takes(store, { n: 1, m: 1 })).toBe(true);
      await store.close();
      const { refused } = await reopen(database, index(true));
      expect(refused).toContain('must be unique');
      // A named index changes with its declaration too.
      const named = await seeded(index(false, 'thing_pair'), [thing({ n: 7, m: 7 })]);
      ({ store } = await opened(named, index(true, 'thing_pair')));
      expect(await takes(store, { n: 7, m: 7 })).toBe(false);
      await store.close();
    });

    it('removing an enum value records hold is refused, naming it and its count; allowDataLoss gives the default', async () => {
      const rows = [thing({ kind: 'b' }), thing({ kind: 'c' }), thing({ kind: 'c' })];
      const database = await seeded(spec('      kind: { type: enum, values: [a, b, c], default: a }'), rows);
      const fewer = spec('      kind: { type: enum, values: [a, b], default: a }');
      const { refused } = await reopen(database, fewer);
      expect(refused).toContain('Thing.kind no longer allows "c", which 2 record(s) hold');
      expect(refused).toContain('--allow-data-loss sets them to the default "a"');

      const { store, report } = await opened(database, fewer, true);
      expect(report.changed).toEqual(['Thing.kind: 2 record(s) holding "c" set to "a"']);
      const after = await store.getMany(
        'Thing',
        rows.map((r) => r.id),
      );
      expect(after.map((r) => [r.kind, r.revision])).toEqual([
        ['b', 1],
        ['a', 2],
        ['a', 2],
      ]);
      await store.close();
    });

    it('an enum value removed from a required field without default, or a state, is refused even with allowDataLoss', async () => {
      const required = await seeded(spec('      kind: { type: enum, values: [a, b], required: true }'), [
        thing({ kind: 'b' }),
      ]);
      const noDefault = await reopen(required, spec('      kind: { type: enum, values: [a], required: true }'), true);
      expect(noDefault.refused).toContain('Thing.kind no longer allows "b", which 1 record(s) hold (refused even with');
      expect(noDefault.refused).toContain('declare one');

      const states = await seeded(spec('      title: { type: string }', STATES), [thing({ status: 'shipped' })]);
      const fewer = STATES.replace(', shipped: { final: true }', '').replace(/\n {8}ship: .*/, '');
      const state = await reopen(states, spec('      title: { type: string }', fewer), true);
      expect(state.refused).toContain(
        'Thing.status no longer allows "shipped", which 1 record(s) hold (refused even with',
      );
      expect(state.refused).toContain('a record changes state only by a transition');
    });
  });
};
