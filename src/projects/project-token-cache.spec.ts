import { beforeEach, describe, expect, it } from '@jest/globals';
import type { ProjectEntity } from './project.entity.js';
import { ProjectTokenCache } from './project-token-cache.js';

const project = (id: number, anonymizeIps = false) => ({ id, anonymizeIps }) as ProjectEntity;

describe('ProjectTokenCache', () => {
  let time: number;
  let loads: string[];
  let stored: Map<string, ProjectEntity>;
  const load = (token: string) => {
    loads.push(token);
    return Promise.resolve(stored.get(token) ?? null);
  };
  const cache = (max = 10) => new ProjectTokenCache(() => time, 1000, max);

  beforeEach(() => {
    time = 0;
    loads = [];
    stored = new Map([
      ['phc_a', project(1)],
      ['phc_b', project(2)],
    ]);
  });

  it('reuses a found project until the TTL, then reads it again', async () => {
    const c = cache();
    expect(await c.get('phc_a', load)).toEqual(project(1));
    stored.set('phc_a', project(1, true));
    time = 999;
    expect((await c.get('phc_a', load))?.anonymizeIps).toBe(false);
    expect(loads).toEqual(['phc_a']);
    time = 1000;
    expect((await c.get('phc_a', load))?.anonymizeIps).toBe(true);
    expect(loads).toEqual(['phc_a', 'phc_a']);
  });

  it('never keeps an unknown token', async () => {
    const c = cache();
    expect(await c.get('phc_unknown', load)).toBeNull();
    expect(await c.get('phc_unknown', load)).toBeNull();
    expect(loads).toEqual(['phc_unknown', 'phc_unknown']);
    expect(c.size).toBe(0);
  });

  it('forgets the changed project at once, and only it', async () => {
    const c = cache();
    await c.get('phc_a', load);
    await c.get('phc_b', load);
    stored.set('phc_a', project(1, true));
    c.forget(1);
    expect((await c.get('phc_a', load))?.anonymizeIps).toBe(true);
    await c.get('phc_b', load);
    expect(loads).toEqual(['phc_a', 'phc_b', 'phc_a']);
  });

  it('forgets every project without an id', async () => {
    const c = cache();
    await c.get('phc_a', load);
    await c.get('phc_b', load);
    c.forget();
    expect(c.size).toBe(0);
    stored.delete('phc_a');
    expect(await c.get('phc_a', load)).toBeNull();
  });

  it('does not keep what a lookup read before a change that happened meanwhile', async () => {
    const c = cache();
    let release: () => void = () => undefined;
    const slow = (token: string) =>
      new Promise<ProjectEntity | null>((resolve) => {
        release = () => resolve(stored.get(token) ?? null);
      });
    const pending = c.get('phc_a', slow);
    c.forget(1);
    release();
    expect(await pending).toEqual(project(1));
    expect(c.size).toBe(0);
  });

  it('holds at most its bound, the oldest going first', async () => {
    const c = cache(2);
    stored.set('phc_c', project(3));
    await c.get('phc_a', load);
    await c.get('phc_b', load);
    await c.get('phc_c', load);
    expect(c.size).toBe(2);
    loads = [];
    await c.get('phc_b', load);
    await c.get('phc_c', load);
    expect(loads).toEqual([]);
    await c.get('phc_a', load);
    expect(loads).toEqual(['phc_a']);
  });
});
