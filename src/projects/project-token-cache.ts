import type { ProjectEntity } from './project.entity.js';

/**
 * How long a project found by its capture token is reused without asking the database again, and how many
 * tokens are remembered. A change made through this replica is seen at once (its entry is forgotten); one made
 * through another replica within this time (docs/decisions.md §13).
 */
export const TOKEN_CACHE_MS = 5000;
export const TOKEN_CACHE_MAX = 10_000;

/**
 * The projects of recently used capture tokens, each for TOKEN_CACHE_MS, at most TOKEN_CACHE_MAX of them (the
 * oldest entry makes room). Unknown tokens are never remembered: an attacker spraying tokens gains nothing from
 * a cache of misses, and a new project's token works at once.
 */
export class ProjectTokenCache {
  /** Oldest first (a Map keeps insertion order, and an entry is re-inserted when refreshed). */
  private readonly entries = new Map<string, { project: ProjectEntity; until: number }>();
  /** Raised by every `forget`: a lookup that started before one does not remember what it found. */
  private generation = 0;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly ttlMs = TOKEN_CACHE_MS,
    private readonly max = TOKEN_CACHE_MAX,
  ) {}

  /** The project of `token`, looked up with `lookUp` unless one found less than the TTL ago is known. */
  get(
    token: string,
    lookUp: (token: string) => Promise<ProjectEntity | null>,
  ): Promise<ProjectEntity | null> {
    const asked = this.now();
    const known = this.entries.get(token);
    if (known && known.until > asked) return Promise.resolve(known.project);
    const generation = this.generation;
    return lookUp(token).then((project) => {
      this.entries.delete(token);
      // A project changed while it was being looked up may have been read before the change.
      if (project && generation === this.generation) {
        if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
        this.entries.set(token, { project, until: asked + this.ttlMs });
      }
      return project;
    });
  }

  /** Forgets `token`: the next capture with it looks it up again. */
  forget(token: string): void {
    this.generation++;
    this.entries.delete(token);
  }

  get size(): number {
    return this.entries.size;
  }
}
