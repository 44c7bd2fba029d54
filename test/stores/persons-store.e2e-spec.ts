/**
 * The conformance suite of the persons store seam (src/persons/persons-store.ts): every implementation listed in
 * PERSONS_STORES passes the same tests.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TransactionHost } from '../../src/database/transactions.js';
import type { PersonsStore } from '../../src/persons/persons-store.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { PERSONS_STORES } from './implementations.js';

describe.each(PERSONS_STORES)('PersonsStore conformance: $name', (implementation) => {
  let t: TestApp;
  let store: PersonsStore;
  let projectId: number;
  let otherProjectId: number;
  let inTransaction: <T>(work: () => Promise<T>) => Promise<T>;
  const now = new Date('2026-11-21T12:00:00.000Z');

  beforeAll(async () => {
    t = await createTestApp();
    store = implementation.of(t.app);
    const transactions = t.app.get(TransactionHost);
    inTransaction = (work) => transactions.withTransaction(work);
    const owner = await t.factories.user();
    projectId = (await t.factories.organization(owner, 'Persons store')).teams[0].id;
    otherProjectId = (await t.factories.organization(owner, 'Persons store other')).teams[0].id;
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });

  it('resolves distinct ids to persons, creating each once, per project', async () => {
    const first = await inTransaction(() => store.resolveDistinctIds(projectId, ['a', 'b'], now));
    const again = await inTransaction(() => store.resolveDistinctIds(projectId, ['a', 'b', 'c'], now));
    expect(again.get('a')).toEqual(first.get('a'));
    expect(again.get('b')).toEqual(first.get('b'));
    expect(first.get('a')?.id).not.toBe(first.get('b')?.id);
    const other = await inTransaction(() => store.resolveDistinctIds(otherProjectId, ['a'], now));
    expect(other.get('a')?.id).not.toBe(first.get('a')?.id);
    expect([...(await store.personsByDistinctId(projectId, ['a', 'zz'])).keys()]).toEqual(['a']);
  });

  it('links a distinct id to a person and merges one person into another', async () => {
    const ids = await inTransaction(() => store.resolveDistinctIds(projectId, ['m1', 'm2'], now));
    const [into, from] = [ids.get('m1')!.id, ids.get('m2')!.id];
    expect(await inTransaction(() => store.addDistinctId(projectId, 'm3', into))).toBe(into);
    await inTransaction(() => store.mergeInto(projectId, from, into));
    const after = await store.personIdsByDistinctId(projectId, ['m1', 'm2', 'm3']);
    expect([...after.values()]).toEqual([into, into, into]);
    expect((await store.distinctIdsOfPerson(projectId, String(into))).sort()).toEqual(['m1', 'm2', 'm3']);
    expect(await store.distinctIdsOfPerson(projectId, String(from))).toEqual([]);
  });

  it('keeps the properties it is given, and marks a person identified', async () => {
    const id = (await inTransaction(() => store.resolveDistinctIds(projectId, ['p1'], now))).get('p1')!.id;
    await inTransaction(async () => {
      const locked = await store.lockProperties(projectId, id, 1 << 20);
      expect(locked?.properties).toEqual({});
      await store.replaceProperties(projectId, id, { email: 'a@b.c', plan: 'pro' });
      await store.markIdentified(projectId, id);
    });
    expect(await store.someProperties(projectId, id, ['email'], 100)).toEqual({ email: 'a@b.c' });
    const embedded = await store.eventPersons(projectId, ['p1'], ['email'], 100);
    expect(embedded.get('p1')).toEqual({
      isIdentified: true,
      firstDistinctId: 'p1',
      properties: { email: 'a@b.c' },
    });
  });

  it('creates a person for a distinct id, finds without creating, and bounds what it reads', async () => {
    const id = await inTransaction(() => store.createForDistinctId(projectId, 'c1', now));
    expect((await store.personIdsByDistinctId(projectId, ['c1'])).get('c1')).toBe(id);
    expect((await store.personsByDistinctId(projectId, ['c1'])).get('c1')?.id).toBe(id);
    // Finding creates nothing.
    expect((await store.personsByDistinctId(projectId, ['c-none'])).size).toBe(0);
    expect((await store.personIdsByDistinctId(projectId, ['c-none'])).size).toBe(0);
    // A distinct id already on a person stays there: adding it elsewhere answers that person.
    const other = await inTransaction(() => store.createForDistinctId(projectId, 'c2', now));
    expect(await inTransaction(() => store.addDistinctId(projectId, 'c1', other))).toBe(id);
    await inTransaction(() => store.replaceProperties(projectId, id, { small: 'x', large: 'y'.repeat(500) }));
    expect(await store.someProperties(projectId, id, ['small', 'large', 'absent'], 100)).toEqual({
      small: 'x',
    });
    await inTransaction(async () => {
      const tooLarge = await store.lockProperties(projectId, id, 100);
      expect(tooLarge?.properties).toBeNull();
      expect(tooLarge?.renderedBytes).toBeGreaterThan(500);
      expect(await store.lockProperties(projectId, 2_000_000_000, 1 << 20)).toBeNull();
    });
    // By uuid as well as by id; another project's person is not found.
    const { uuid } = (await store.personsByDistinctId(projectId, ['c1'])).get('c1')!;
    expect(await store.distinctIdsOfPerson(projectId, uuid)).toEqual(['c1']);
    expect(await store.distinctIdsOfPerson(otherProjectId, uuid)).toEqual([]);
  });
});
