import { describe, expect, it } from '@jest/globals';
import { DueExportsCursor } from './due-exports-cursor.js';

const pause = () => new Promise((resolve) => setTimeout(resolve, 2));

/**
 * A tick over `keys` (sorted) with `limit` exports a lock, on `connections`: what each lock statement was given and
 * returned, how many transactions and lock statements ran at once at most, and the counts.
 */
async function tick(keys: string[], limit: number, connections: number, failAt?: number) {
  const cursor = new DueExportsCursor(limit);
  const locks: { after: string; ids: string[] }[] = [];
  let open = 0;
  let mostOpen = 0;
  let locking = 0;
  let mostLocking = 0;
  const result = cursor.drain(connections, async () => {
    open++;
    mostOpen = Math.max(mostOpen, open);
    try {
      await pause(); // the transaction's first statements
      const due = await cursor.next(async (after) => {
        locking++;
        mostLocking = Math.max(mostLocking, locking);
        await pause();
        locking--;
        if (locks.length === failAt) throw new Error('lock failed');
        const ids = keys.filter((k) => k > after).slice(0, limit);
        locks.push({ after, ids });
        return ids.map((id) => ({ id }));
      });
      if (due === null) return { created: 0, exports: 0 };
      await pause(); // the runs, their dispatch, the commit
      await pause();
      return { created: due.length * 2, exports: due.length };
    } finally {
      open--;
    }
  });
  return { result, locks, most: () => ({ open: mostOpen, locking: mostLocking }) };
}

const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${String(i).padStart(4, '0')}`);

describe('DueExportsCursor', () => {
  it('locks every export once, in key order, one lock statement at a time, on up to `connections` at once', async () => {
    const all = keys(23);
    const t = await tick(all, 5, 2);
    expect(await t.result).toEqual({ created: 46, exports: 23 });
    expect(t.locks.flatMap((l) => l.ids)).toEqual(all);
    expect(t.locks.map((l) => l.after)).toEqual([
      '00000000-0000-0000-0000-000000000000',
      'k0004',
      'k0009',
      'k0014',
      'k0019',
    ]);
    expect(t.most()).toEqual({ open: 2, locking: 1 });
  });

  it('uses one connection when the first lock takes fewer than the limit (what a tick with one connection sends)', async () => {
    const t = await tick(keys(3), 5, 4);
    expect(await t.result).toEqual({ created: 6, exports: 3 });
    expect(t.locks).toHaveLength(1);
    expect(t.most().open).toBe(1);
  });

  it('with one connection, repeats its transactions one after the other until a lock takes fewer than the limit', async () => {
    const t = await tick(keys(10), 5, 1);
    expect(await t.result).toEqual({ created: 20, exports: 10 });
    // The third lock finds nothing: the second took exactly the limit.
    expect(t.locks.map((l) => l.ids.length)).toEqual([5, 5, 0]);
    expect(t.most().open).toBe(1);
  });

  it('stops at a failure and throws it once the other transactions have ended', async () => {
    const t = await tick(keys(40), 5, 2, 2);
    await expect(t.result).rejects.toThrow('lock failed');
    expect(t.locks).toHaveLength(2);
  });
});
