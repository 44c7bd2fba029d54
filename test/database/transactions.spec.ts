import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { DataSource, QueryFailedError, type QueryRunner } from 'typeorm';
import { PoolShares } from '../../src/database/pool-shares.js';
import { RepositoryBase } from '../../src/database/repository-base.js';
import {
  runRetriedTransaction,
  STATEMENT_LIMIT_REUSE_MS,
  TransactionHost,
  Transactional,
} from '../../src/database/transactions.js';
import { type ScratchDataSource, scratchDataSource } from '../support/scratch-data-source.js';

/** A repository of a scratch table, written the way the service's repositories are. */
@Injectable()
class NotesRepository extends RepositoryBase {
  async add(text: string): Promise<void> {
    await this.query('INSERT INTO notes (text) VALUES ($1)', [text]);
  }

  async texts(): Promise<string[]> {
    const rows = await this.query<{ text: string }>('SELECT text FROM notes ORDER BY id');
    return rows.map((r) => r.text);
  }

  /** Locks the note with this text until the transaction ends. */
  async lock(text: string): Promise<void> {
    await this.query('SELECT 1 FROM notes WHERE text = $1 FOR UPDATE', [text]);
  }

  /** The server process of the connection the repository's statements run on. */
  async backend(): Promise<number> {
    const [{ pid }] = await this.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return pid;
  }

  /** A setting of the connection the repository's statements run on. */
  async setting(name: string): Promise<string> {
    const [{ value }] = await this.query<{ value: string }>('SELECT current_setting($1) AS value', [name]);
    return value;
  }

  /** Sets a setting for the rest of the current transaction. */
  async setLocal(name: string, value: string): Promise<void> {
    await this.query('SELECT set_config($1, $2, true)', [name, value]);
  }

  /** Renames notes; how many changed. */
  async rename(from: string, to: string): Promise<number> {
    return (await this.modify('UPDATE notes SET text = $2 WHERE text = $1', [from, to])).affected;
  }

  /** Two inserts that must commit together, kept in the repository. */
  addPair(a: string, b: string, fail = false): Promise<void> {
    return this.transaction(async () => {
      await this.add(a);
      if (fail) throw new Error('second insert refused');
      await this.add(b);
    });
  }
}

class NotesService {
  constructor(
    readonly transactions: TransactionHost,
    readonly notes: NotesRepository,
  ) {}

  @Transactional()
  async addAll(texts: string[], failAfter?: number): Promise<number[]> {
    const backends: number[] = [];
    for (const [i, text] of texts.entries()) {
      if (i === failAfter) throw new Error('refused');
      await this.notes.add(text);
      backends.push(await this.notes.backend());
    }
    return backends;
  }
}

class WithoutHost {
  @Transactional()
  async run(): Promise<void> {}
}

describe('transactions (TransactionHost, @Transactional, RepositoryBase)', () => {
  let scratch: ScratchDataSource;
  let dataSource: DataSource;
  let other: DataSource;
  let host: TransactionHost;
  let notes: NotesRepository;

  beforeAll(async () => {
    scratch = await scratchDataSource(4);
    dataSource = scratch.dataSource;
    other = await scratch.open({ poolSize: 2 });
    await dataSource.query('CREATE TABLE notes (id serial PRIMARY KEY, text text NOT NULL)');
    host = new TransactionHost(dataSource);
    notes = new NotesRepository(dataSource);
  });

  afterAll(async () => {
    await scratch?.close();
  });

  const reset = () => dataSource.query('TRUNCATE notes');

  it('runs every repository call inside withTransaction on the transaction connection, and commits', async () => {
    await reset();
    const outside = await notes.backend();
    const [first, second] = await host.withTransaction(async () => {
      expect(host.isActive).toBe(true);
      await notes.add('a');
      // Not visible to another connection before the commit.
      expect(await other.query('SELECT count(*)::int AS n FROM notes')).toEqual([{ n: 0 }]);
      return [await notes.backend(), await notes.backend()];
    });
    expect(first).toBe(second);
    expect(host.isActive).toBe(false);
    expect(await notes.texts()).toEqual(['a']);
    expect(typeof outside).toBe('number');
  });

  it('rolls back everything when the work throws', async () => {
    await reset();
    await expect(
      host.withTransaction(async () => {
        await notes.add('a');
        await notes.add('b');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await notes.texts()).toEqual([]);
  });

  it('@Transactional() wraps the method: one connection, all or nothing', async () => {
    await reset();
    const service = new NotesService(host, notes);
    const backends = await service.addAll(['a', 'b', 'c']);
    expect(new Set(backends).size).toBe(1);
    expect(await notes.texts()).toEqual(['a', 'b', 'c']);
    await expect(service.addAll(['d', 'e', 'f'], 2)).rejects.toThrow('refused');
    expect(await notes.texts()).toEqual(['a', 'b', 'c']);
  });

  it('a nested transaction joins the outer one: the outer rollback undoes the inner work', async () => {
    await reset();
    await expect(
      host.withTransaction(async () => {
        await notes.addPair('a', 'b');
        await host.withTransaction(() => notes.add('c'));
        throw new Error('outer fails');
      }),
    ).rejects.toThrow('outer fails');
    expect(await notes.texts()).toEqual([]);
    await notes.addPair('x', 'y', true).catch(() => undefined);
    expect(await notes.texts()).toEqual([]);
    await notes.addPair('x', 'y');
    expect(await notes.texts()).toEqual(['x', 'y']);
  });

  it('keeps concurrent transactions apart', async () => {
    await reset();
    const service = new NotesService(host, notes);
    const results = await Promise.allSettled([
      service.addAll(['a1', 'a2']),
      service.addAll(['b1', 'b2'], 1),
      service.addAll(['c1', 'c2']),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const [a, , c] = results.map((r) => (r.status === 'fulfilled' ? r.value : []));
    expect(a[0]).toBe(a[1]);
    expect(c[0]).toBe(c[1]);
    expect(a[0]).not.toBe(c[0]);
    expect((await notes.texts()).sort()).toEqual(['a1', 'a2', 'c1', 'c2']);
  });

  it('runRetriedTransaction runs a transaction lost to a deadlock again: both of two opposite lockers commit', async () => {
    await reset();
    await dataSource.query("INSERT INTO notes (text) VALUES ('x'), ('y')");
    let arrived = 0;
    let bothHoldOne!: () => void;
    const barrier = new Promise<void>((resolve) => (bothHoldOne = resolve));
    const retried: string[] = [];
    // Each locks one note, waits until the other holds its note, then locks the other's: a deadlock, once.
    const locker = (first: string, second: string, label: string) =>
      runRetriedTransaction(
        dataSource,
        async () => {
          await notes.lock(first);
          if (++arrived === 2) bothHoldOne();
          await barrier;
          await notes.lock(second);
          await notes.add(label);
        },
        (attempt, error) => retried.push(`${label} ${attempt} ${(error as { code?: string }).code}`),
      );
    await Promise.all([locker('x', 'y', 'xy'), locker('y', 'x', 'yx')]);
    expect(retried).toEqual([expect.stringMatching(/^(xy|yx) 1 40P01$/)]);
    expect(arrived).toBe(3);
    expect((await notes.texts()).sort()).toEqual(['x', 'xy', 'y', 'yx']);
    // Inside a caller's transaction it joins it: nothing to run again there.
    await expect(
      host.withTransaction(() =>
        runRetriedTransaction(dataSource, async () => {
          await notes.add('joined');
          throw Object.assign(new Error('lost'), { code: '40P01' });
        }),
      ),
    ).rejects.toThrow('lost');
    expect(await notes.texts()).not.toContain('joined');
  });

  it("does not lend a transaction to another data source's repositories", async () => {
    await reset();
    const otherNotes = new NotesRepository(other);
    await expect(
      host.withTransaction(async () => {
        await notes.add('mine');
        await otherNotes.add('theirs');
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await notes.texts()).toEqual(['theirs']);
  });

  it('never runs a statement of a transaction outside it once its connection is gone', async () => {
    await reset();
    let late: Promise<void> = Promise.resolve();
    // Released once the transaction has ended (not after a delay a slow commit could outlast): the statement is
    // sent from inside the transaction's context, after its end.
    let ended!: () => void;
    const transactionEnded = new Promise<void>((resolve) => (ended = resolve));
    await host.withTransaction(async () => {
      await notes.add('inside');
      late = transactionEnded.then(() => notes.add('after'));
    });
    ended();
    await expect(late).rejects.toThrow(/released/i);
    expect(await notes.texts()).toEqual(['inside']);
  });

  describe('limitStatements', () => {
    const lockTimeout = () => notes.setting('lock_timeout');
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it('bounds the transaction once, keeps that bound for calls within STATEMENT_LIMIT_REUSE_MS, then tightens it', async () => {
      const seen = await host.withTransaction(async () => {
        await host.limitStatements(5000);
        const first = await lockTimeout();
        // A round trip saved: the bound set just now (at most this much later than the new deadline) stays.
        await host.limitStatements(4900);
        const soon = await lockTimeout();
        await sleep(STATEMENT_LIMIT_REUSE_MS + 20);
        await host.limitStatements(3000);
        return [first, soon, await lockTimeout()];
      });
      expect(seen).toEqual(['5s', '5s', '3s']);
    });

    it("never raises statement_timeout above the connection's own, in any unit, and treats 0 as none", async () => {
      for (const [own, ms, expected] of [
        ['2s', 5000, '2s'],
        ['1min', 5000, '5s'],
        ['1500ms', 1000, '1s'],
        ['0', 3000, '3s'],
      ] as const) {
        const seen = await host.withTransaction(async () => {
          await notes.setLocal('statement_timeout', own);
          await host.limitStatements(ms);
          return [await notes.setting('statement_timeout'), await lockTimeout()];
        });
        expect(seen).toEqual([expected, `${ms / 1000}s`]);
      }
    });

    it("sends nothing while the connection's own statement_timeout ends within STATEMENT_LIMIT_REUSE_MS of the bound, else bounds the transaction", async () => {
      // A pool whose connections the shares hand over, as the application's (DATABASE_STATEMENT_TIMEOUT_MS 30 s).
      const shared = await scratch.open({ poolSize: 2, statementTimeoutMs: 30_000 });
      try {
        new PoolShares({
          apiShare: 1,
          waitMs: 1000,
          baseTimeoutMs: 30_000,
          timeoutMs: { read: 20_000, write: 30_000 },
        }).install((shared.driver as unknown as { master: Parameters<PoolShares['install']>[0] }).master);
        const sharedHost = new TransactionHost(shared);
        const sharedNotes = new NotesRepository(shared);
        const settings = async () => [
          await sharedNotes.setting('lock_timeout'),
          await sharedNotes.setting('statement_timeout'),
        ];
        const seen = await sharedHost.withTransaction(async () => {
          // 30 s of the connection's own ends at most 100 ms after the 29.95 s left: nothing is sent.
          await sharedHost.limitStatements(30_000 - STATEMENT_LIMIT_REUSE_MS / 2);
          const kept = await settings();
          // 20 s left: the connection's own would outlast it, so the transaction is bounded.
          await sharedHost.limitStatements(20_000);
          return [...kept, ...(await settings())];
        });
        expect(seen).toEqual(['0', '30s', '20s', '20s']);
        // The next transaction on the same connections starts from the connection's own settings again.
        expect(await sharedHost.withTransaction(settings)).toEqual(['0', '30s']);
      } finally {
        await shared.destroy();
      }
    });

    it('is set again after a savepoint that set it rolled back, and afresh in the next transaction', async () => {
      const seen = await host.withTransaction(async () => {
        await host
          .withSavepoint(async () => {
            await host.limitStatements(4000);
            throw new Error('refused');
          })
          .catch(() => undefined);
        const afterRollback = await lockTimeout();
        await host.limitStatements(2000);
        return [afterRollback, await lockTimeout()];
      });
      expect(seen[0]).not.toBe('4s');
      expect(seen[1]).toBe('2s');
      expect(await host.withTransaction(async () => (await host.limitStatements(1000), lockTimeout()))).toBe(
        '1s',
      );
    });
  });

  it('outside a transaction, plain SQL answers as TypeORM does, on one checkout of the pool without a query runner', async () => {
    await reset();
    const runners = jest.spyOn(dataSource, 'createQueryRunner');
    const pool = (dataSource.driver as unknown as { master: { totalCount: number; idleCount: number } })
      .master;
    try {
      await notes.add('a');
      await notes.add('b');
      expect(await notes.texts()).toEqual(['a', 'b']);
      // An UPDATE: TypeORM's `[rows, affected]`.
      expect(await notes.rename('a', 'c')).toBe(1);
      expect(await notes.rename('nothing', 'd')).toBe(0);
      expect(await notes.texts()).toEqual(['c', 'b']);
      const connections = pool.totalCount;
      // A failed statement is TypeORM's QueryFailedError around the driver's error; its connection stays pooled.
      const failure = await notes.add(null as unknown as string).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(QueryFailedError);
      expect((failure as QueryFailedError).driverError).toMatchObject({ code: '23502' });
      expect((failure as QueryFailedError).query).toBe('INSERT INTO notes (text) VALUES ($1)');
      expect(pool.totalCount).toBe(connections);
      expect(pool.idleCount).toBe(connections);
      expect(runners).not.toHaveBeenCalled();
      // Inside a transaction the statements still run on its query runner.
      await host.withTransaction(() => notes.add('e'));
      expect(runners).toHaveBeenCalled();
    } finally {
      runners.mockRestore();
    }
  });

  it('inside a transaction, plain SQL answers as TypeORM does, on its connection without the runner per statement', async () => {
    await reset();
    const probe = dataSource.createQueryRunner();
    const runnerQuery = jest.spyOn(Object.getPrototypeOf(probe) as QueryRunner, 'query');
    await probe.release();
    try {
      const renamed = await host.withTransaction(async () => {
        await notes.add('a');
        await notes.add('b');
        // An UPDATE: TypeORM's `[rows, affected]`, read inside the transaction.
        return [await notes.rename('a', 'c'), await notes.rename('nothing', 'd'), await notes.texts()];
      });
      expect(renamed).toEqual([1, 0, ['c', 'b']]);
      expect(await notes.texts()).toEqual(['c', 'b']);
      // A failed statement is TypeORM's QueryFailedError around the driver's error, and the transaction rolls back.
      const failure = await host
        .withTransaction(async () => {
          await notes.add('e');
          await notes.add(null as unknown as string);
        })
        .catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(QueryFailedError);
      expect((failure as QueryFailedError).driverError).toMatchObject({ code: '23502' });
      expect((failure as QueryFailedError).query).toBe('INSERT INTO notes (text) VALUES ($1)');
      expect(await notes.texts()).toEqual(['c', 'b']);
      // The plain statements skipped the runner's `query` (the transaction's own statements use it).
      const plain = runnerQuery.mock.calls.filter(([sql]) => /notes/.test(String(sql)));
      expect(plain).toEqual([]);
    } finally {
      runnerQuery.mockRestore();
    }
  });

  it('@Transactional() on a class without a TransactionHost fails clearly', async () => {
    await expect(new WithoutHost().run()).rejects.toThrow(
      '@Transactional() on WithoutHost.run: the class must inject TransactionHost.',
    );
  });
});
