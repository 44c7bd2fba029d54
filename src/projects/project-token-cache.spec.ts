import { describe, expect, it } from '@jest/globals';
import type { ProjectEntity } from './project.entity.js';
import { ProjectTokenCache } from './project-token-cache.js';

const project = (id: number, token: string) => ({ id, apiToken: token }) as ProjectEntity;

describe('ProjectTokenCache', () => {
  /** A cache on a settable clock, and a lookup that counts its calls and answers from `projects`. */
  const setup = (ttl = 5000, max = 3) => {
    let now = 1_000_000;
    const projects = new Map<string, ProjectEntity>();
    const asked: string[] = [];
    const cache = new ProjectTokenCache(() => now, ttl, max);
    const lookUp = (token: string) => {
      asked.push(token);
      return Promise.resolve(projects.get(token) ?? null);
    };
    return { cache, projects, asked, lookUp, advance: (ms: number) => (now += ms) };
  };

  it('reuses a found project until its time is up, then looks it up again', async () => {
    const { cache, projects, asked, lookUp, advance } = setup();
    projects.set('phc_a', project(1, 'phc_a'));
    expect(await cache.get('phc_a', lookUp)).toEqual(project(1, 'phc_a'));
    advance(4999);
    projects.set('phc_a', project(2, 'phc_a'));
    expect((await cache.get('phc_a', lookUp))?.id).toBe(1);
    expect(asked).toEqual(['phc_a']);
    advance(1);
    expect((await cache.get('phc_a', lookUp))?.id).toBe(2);
    expect(asked).toEqual(['phc_a', 'phc_a']);
  });

  it('never remembers an unknown token', async () => {
    const { cache, projects, asked, lookUp } = setup();
    expect(await cache.get('phc_new', lookUp)).toBeNull();
    projects.set('phc_new', project(3, 'phc_new'));
    expect((await cache.get('phc_new', lookUp))?.id).toBe(3);
    expect(asked).toEqual(['phc_new', 'phc_new']);
    expect(cache.size).toBe(1);
  });

  it('forgets a token at once, and a lookup running across a forget does not remember what it read', async () => {
    const { cache, projects, asked, lookUp } = setup();
    projects.set('phc_a', project(1, 'phc_a'));
    await cache.get('phc_a', lookUp);
    cache.forget('phc_a');
    projects.set('phc_a', project(2, 'phc_a'));
    expect((await cache.get('phc_a', lookUp))?.id).toBe(2);
    // A lookup that read the old row, then a change (and its forget), then the lookup's answer.
    let release: (p: ProjectEntity) => void = () => undefined;
    cache.forget('phc_a');
    const slow = cache.get('phc_a', () => new Promise<ProjectEntity>((resolve) => (release = resolve)));
    cache.forget('phc_a');
    release(project(1, 'phc_a'));
    expect((await slow)?.id).toBe(1);
    projects.set('phc_a', project(4, 'phc_a'));
    expect((await cache.get('phc_a', lookUp))?.id).toBe(4);
    expect(asked).toEqual(['phc_a', 'phc_a', 'phc_a']);
  });

  it('holds at most its maximum of tokens, making room by the oldest', async () => {
    const { cache, projects, asked, lookUp } = setup(5000, 3);
    for (const [i, token] of ['phc_1', 'phc_2', 'phc_3', 'phc_4'].entries()) {
      projects.set(token, project(i, token));
      await cache.get(token, lookUp);
    }
    expect(cache.size).toBe(3);
    asked.length = 0;
    await cache.get('phc_4', lookUp);
    await cache.get('phc_2', lookUp);
    expect(asked).toEqual([]);
    await cache.get('phc_1', lookUp);
    expect(asked).toEqual(['phc_1']);
    expect(cache.size).toBe(3);
  });
});
