import { Global, Injectable, Module } from '@nestjs/common';
import { AppConfig } from '../../config/config.js';
import { ApiError } from '../errors/api-error.js';

/** Who runs an expensive read: the API key, and the organization whose data it reads. */
export interface ExpensiveReader {
  keyId: string;
  organizationId: string;
}

/** Seconds a refused expensive read is told to wait (`Retry-After`). */
export const EXPENSIVE_READ_RETRY_SECONDS = 5;

/** In-flight counts by key; an entry is deleted when its count drops to 0 (bounded by the reads in flight). */
class InFlight {
  private readonly counts = new Map<string, number>();

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  add(key: string): void {
    this.counts.set(key, this.get(key) + 1);
  }

  remove(key: string): void {
    const left = this.get(key) - 1;
    if (left > 0) this.counts.set(key, left);
    else this.counts.delete(key);
  }
}

/**
 * The per-process cap on expensive reads: reads whose statements may scan much of a project's data (the
 * recordings list filtered by `events` or `exclude_events`) and hold a database connection for seconds. One API
 * key may run at most API_EXPENSIVE_READS_PER_KEY of them at once, one organization (all its members' keys
 * together) at most API_EXPENSIVE_READS_PER_ORGANIZATION; one more is refused at once with 429 `throttled` and
 * `Retry-After`, so one caller cannot take the API's share of the database pool (docs/limits-api.md). A feature
 * marks a read expensive by running it through `run` once it knows the organization:
 *
 *     return this.expensiveReads.run({ keyId: principal.keyId, organizationId: project.organizationId }, () =>
 *       this.repository.listFiltered(...),
 *     );
 */
@Injectable()
export class ExpensiveReads {
  private readonly perKey: number;
  private readonly perOrganization: number;
  private readonly keys = new InFlight();
  private readonly organizations = new InFlight();

  constructor(config: AppConfig) {
    this.perKey = config.get('API_EXPENSIVE_READS_PER_KEY');
    this.perOrganization = config.get('API_EXPENSIVE_READS_PER_ORGANIZATION');
  }

  /** Runs `work` as an expensive read of `reader`, or throws 429 when the key or the organization is at its cap. */
  async run<T>(reader: ExpensiveReader, work: () => Promise<T>): Promise<T> {
    if (this.perKey > 0 && this.keys.get(reader.keyId) >= this.perKey) {
      throw refused(`this API key may run at most ${this.perKey}`);
    }
    if (this.perOrganization > 0 && this.organizations.get(reader.organizationId) >= this.perOrganization) {
      throw refused(`the keys of this organization may run at most ${this.perOrganization}`);
    }
    this.keys.add(reader.keyId);
    this.organizations.add(reader.organizationId);
    try {
      return await work();
    } finally {
      this.keys.remove(reader.keyId);
      this.organizations.remove(reader.organizationId);
    }
  }

  /** Expensive reads in flight for `keyId` (metrics, tests). */
  inFlightFor(keyId: string): number {
    return this.keys.get(keyId);
  }
}

function refused(who: string): ApiError {
  return new ApiError(
    429,
    'throttled',
    `Too many expensive reads at once: ${who} at a time (such as recordings lists filtered by events). ` +
      `Retry after ${EXPENSIVE_READ_RETRY_SECONDS} seconds.`,
    null,
    'throttled_error',
    { 'Retry-After': String(EXPENSIVE_READ_RETRY_SECONDS) },
  );
}

/** The one `ExpensiveReads` of the application, which every module may inject. */
@Global()
@Module({ providers: [ExpensiveReads], exports: [ExpensiveReads] })
export class ExpensiveReadsModule {}
