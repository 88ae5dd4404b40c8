import { describe, expect, it } from 'vitest';
import type { RuntimeContext } from '../../runtime/context.ts';
import type { VersionUse } from '../../storage/index.ts';
import { createVersionUsage } from './usage.ts';

/** A counter over a store that refuses the first batch it is given. */
const counterWithFailingStore = (now: () => Date) => {
  const added: VersionUse[][] = [];
  let refuse = true;
  const versionUsage = {
    async add(rows: readonly VersionUse[]) {
      if (refuse) {
        refuse = false;
        throw new Error('database unavailable');
      }
      added.push([...rows]);
    },
    async list() {
      return [];
    },
  };
  const ctx = { now, store: { versionUsage } } as unknown as RuntimeContext;
  return { usage: createVersionUsage(ctx), added };
};

describe('version usage counter', () => {
  it('keeps a batch the store refused and adds it with the next one, one row per version, caller and day', async () => {
    let at = Date.parse('2026-11-26T23:59:59Z');
    const { usage, added } = counterWithFailingStore(() => new Date(at));
    usage.count('v1', 'ann');
    usage.count('v1', 'ann');
    await expect(usage.flush()).rejects.toThrow('database unavailable');
    at += 2000; // the next UTC day
    usage.count('v1', 'ann');
    usage.count('v2', '');
    await usage.flush();
    expect(added).toEqual([
      [
        { version: 'v1', caller: 'ann', day: '2026-11-26', count: 2, lastSeen: '2026-11-26T23:59:59.000Z' },
        { version: 'v1', caller: 'ann', day: '2026-11-27', count: 1, lastSeen: '2026-11-27T00:00:01.000Z' },
        { version: 'v2', caller: '', day: '2026-11-27', count: 1, lastSeen: '2026-11-27T00:00:01.000Z' },
      ],
    ]);
    await usage.flush();
    expect(added).toHaveLength(1);
  });
});
