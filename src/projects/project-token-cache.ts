import type { ProjectEntity } from './project.entity.js';

/** How long a project found by its capture token is reused before it is read again (docs/decisions.md §13). */
export const PROJECT_TOKEN_CACHE_TTL_MS = 5_000;
/** Most tokens remembered; past it the oldest entry goes. */
export const PROJECT_TOKEN_CACHE_MAX_ENTRIES = 10_000;

interface Entry {
  project: ProjectEntity;
  expires: number;
}

/**
 * The projects of capture tokens recently looked up, so that a capture request does not read its project every
 * time: bounded (PROJECT_TOKEN_CACHE_MAX_ENTRIES, oldest first out), each entry kept PROJECT_TOKEN_CACHE_TTL_MS.
 * Only found projects are kept (unknown tokens, which anyone can send, are read each time and never fill it).
 * A change of a project on this replica forgets it at once (`forget`); on another replica it shows within the TTL.
 * A lookup that started before a `forget` does not store what it read (it may predate the change).
 */
export class ProjectTokenCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every `forget`: a lookup stores its result only when none happened meanwhile. */
  private generation = 0;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly ttlMs = PROJECT_TOKEN_CACHE_TTL_MS,
    private readonly maxEntries = PROJECT_TOKEN_CACHE_MAX_ENTRIES,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The project of `token`, from the cache while fresh, else from `load` (and then kept if found). */
  async get(
    token: string,
    load: (token: string) => Promise<ProjectEntity | null>,
  ): Promise<ProjectEntity | null> {
    const entry = this.entries.get(token);
    if (entry) {
      if (entry.expires > this.now()) return entry.project;
      this.entries.delete(token);
    }
    const generation = this.generation;
    const project = await load(token);
    if (project && generation === this.generation) {
      this.entries.delete(token);
      if (this.entries.size >= this.maxEntries) {
        const oldest = this.entries.keys().next();
        if (!oldest.done) this.entries.delete(oldest.value);
      }
      this.entries.set(token, { project, expires: this.now() + this.ttlMs });
    }
    return project;
  }

  /** Forgets the project of this id (its settings or token changed), or every project without an id. */
  forget(projectId?: number): void {
    this.generation++;
    if (projectId === undefined) {
      this.entries.clear();
      return;
    }
    for (const [token, entry] of this.entries) if (entry.project.id === projectId) this.entries.delete(token);
  }
}
