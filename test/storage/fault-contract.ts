import { describe, expect, it } from 'vitest';
import type { Row } from '../../src/storage/index.ts';
import { StoreError } from '../../src/storage/index.ts';
import type { Backend } from './backend.ts';
import { planOfSpec } from './plan.ts';

const SPEC = `
ninefold: 1
service: { name: faults }
resources:
  Item:
    fields: { name: { type: string, required: true } }
`;

let seq = 0;
const item = (name: string): Row => {
  seq++;
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString();
  return { id: `itm_${String(seq).padStart(6, '0')}`, createdAt: at, updatedAt: at, revision: 1, name };
};

/** What a store does when its database goes away or it is closed: StoreErrors only, and nothing acknowledged. */
export const faultContract = (name: string, backend: Backend) => {
  describe(`Store contract: ${name}, faults`, () => {
    const plan = planOfSpec(SPEC);
    const opened = async () => {
      const database = backend.create();
      const store = backend.open(database);
      await store.migrate(plan);
      await store.insert('Item', item('kept'));
      return { database, store };
    };
    const unavailable = async (outcome: Promise<unknown>) => {
      const error = await outcome.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).kind).toBe('unavailable');
    };

    it('closes intact, with nothing to report', async () => {
      const { store } = await opened();
      expect(await store.close()).toEqual({ intact: true });
    });

    it('once the database is lost, a write on its own is refused, then every call', async () => {
      const { database, store } = await opened();
      await backend.lose(database);
      await unavailable(store.insert('Item', item('after')));
      await unavailable(store.get('Item', 'any'));
      await unavailable(store.events.lastSeq());
      const report = await store.close();
      expect(report.intact).toBe(false);
      expect(report.note).toContain('deleted or replaced');
    });

    it('once the database is lost, transactions committed together are all refused', async () => {
      const { database, store } = await opened();
      await backend.lose(database);
      const outcomes = Array.from({ length: 5 }, (_, i) =>
        store.transaction(async () => {
          await store.insert('Item', item(`together-${i}`));
          await store.events.append({ type: 'Item.created', time: new Date().toISOString(), data: { i } });
        }),
      );
      await Promise.all(outcomes.map(unavailable));
      await unavailable(store.transaction(async () => undefined));
      await store.close();
    });

    it('once the database is lost, ping fails', async () => {
      const { database, store } = await opened();
      await backend.lose(database);
      await unavailable(store.ping());
      await store.close();
    });

    it('a closed store refuses calls with StoreError unavailable', async () => {
      const { store } = await opened();
      await store.close();
      await unavailable(store.get('Item', 'any'));
      await unavailable(store.insert('Item', item('late')));
      await unavailable(store.ping());
    });
  });
};
