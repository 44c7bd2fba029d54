import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApiPoolShare } from './pool-shares.js';

/** The part of node-postgres' Pool the metrics read. */
export interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options?: { max?: number };
}

/**
 * What the operational code (readiness, metrics) needs of the database, so it injects no DataSource: a ping,
 * and the pool's counters.
 */
@Injectable()
export class DatabaseProbe {
  constructor(
    private readonly dataSource: DataSource,
    private readonly apiShare: ApiPoolShare,
  ) {}

  /** Resolves once the database answers a trivial statement. */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }

  /** The API's share of the pool (DATABASE_POOL_RESERVE): connections held, checkouts waiting, its size. */
  apiShareCounts(): { inUse: number; waiting: number; size: number } {
    const { shares } = this.apiShare;
    return { inUse: shares.apiInUse, waiting: shares.apiWaiting, size: shares.apiShare };
  }

  /** The pool's counters, or undefined before the pool exists. */
  poolCounts(): PoolCounts | undefined {
    return (this.dataSource.driver as unknown as { master?: PoolCounts }).master;
  }
}
