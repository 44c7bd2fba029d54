import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

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
  constructor(private readonly dataSource: DataSource) {}

  /** Resolves once the database answers a trivial statement. */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }

  /** The pool's counters, or undefined before the pool exists. */
  poolCounts(): PoolCounts | undefined {
    return (this.dataSource.driver as unknown as { master?: PoolCounts }).master;
  }
}
