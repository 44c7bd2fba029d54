import type { DataSource } from 'typeorm';
import { currentManager, TransactionHost } from '../../src/database/transactions.js';

/** Pages in the events partitions' TOAST relations, and how many of them this transaction has fetched. */
async function eventsToast(dataSource: DataSource): Promise<{ pages: number; fetched: number }> {
  const [row]: { pages: string; fetched: string }[] = await currentManager(dataSource).query(
    `SELECT coalesce(sum(pg_relation_size(c.reltoastrelid)), 0) / 8192 AS pages,
            coalesce(sum(pg_stat_get_xact_blocks_fetched(c.reltoastrelid)), 0) AS fetched
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'events'::regclass AND c.reltoastrelid <> 0`,
  );
  return { pages: Number(row.pages), fetched: Number(row.fetched) };
}

/**
 * Runs `read` in one transaction and reports what it returned, the TOAST pages the events partitions hold, and
 * how many of them `read` fetched: the transaction's own counters, on its connection, so nothing else is counted.
 * PostgreSQL only (on Citus the events are read on the workers, whose counters the coordinator does not see).
 */
export async function eventsToastReads<T>(
  dataSource: DataSource,
  transactions: TransactionHost,
  read: () => Promise<T>,
): Promise<{ result: T; pages: number; fetched: number }> {
  return transactions.withTransaction(async () => {
    const before = await eventsToast(dataSource);
    const result = await read();
    const after = await eventsToast(dataSource);
    return { result, pages: after.pages, fetched: after.fetched - before.fetched };
  });
}
