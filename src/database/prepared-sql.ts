import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';

/**
 * A statement PostgreSQL may plan once per connection: a named prepared statement of the extended protocol, which
 * each connection parses and plans on first use and then only binds and executes. For the point lookups every
 * request sends (the key, the caller's access, the object by id) and the writes of the hot routes, whose planning
 * cost PostgreSQL more than their execution (docs/performance.md, "User time, system time and the database's
 * planning"). Only statements of fixed text are marked, and only lookups by key: a list whose best plan depends on
 * its parameters (one project of a million rows, another of ten) keeps being planned for its values.
 */
export interface PreparedSql {
  readonly text: string;
  /** The statement's name on every connection (derived from the text), or undefined: sent unnamed. */
  readonly name: string | undefined;
}

/**
 * How many texts get a name at most in a process. Each named text costs every pool connection its plan in the
 * server (and the driver a map entry): the marked statements of the code are a few dozen; should a marked text
 * ever vary with its input, the texts past this bound are sent unnamed instead of filling the connections.
 */
export const PREPARED_TEXTS_MAX = 200;

const named = new Map<string, PreparedSql>();

/**
 * The statement `text` marked to be prepared (see PreparedSql); the same object for the same text. Past
 * PREPARED_TEXTS_MAX texts, an unnamed one.
 */
export function prepared(text: string): PreparedSql {
  const known = named.get(text);
  if (known) return known;
  if (named.size >= PREPARED_TEXTS_MAX) return { text, name: undefined };
  const statement = { text, name: `s_${createHash('sha256').update(text).digest('hex').slice(0, 24)}` };
  named.set(text, statement);
  return statement;
}

/** The data sources whose pools send marked statements named (DATABASE_PREPARED_STATEMENTS). */
const preparing = new WeakSet<DataSource>();

/**
 * Whether `dataSource` sends marked statements as named prepared statements. Off by default (the CLI's and tools'
 * data sources); the application's data source is set from DATABASE_PREPARED_STATEMENTS. Off behind a
 * connection pooler that moves a session's statements between server connections (PgBouncer in transaction
 * mode before 1.21, or without `max_prepared_statements`): a name parsed on one server connection is unknown on
 * the next.
 */
export function setPreparedStatements(dataSource: DataSource, enabled: boolean): void {
  if (enabled) preparing.add(dataSource);
  else preparing.delete(dataSource);
}

/** Names no longer sent, after a connection refused their plan (`forgetIfStale`). */
const stale = new Set<string>();

/** Whether `dataSource` sends marked statements named. */
export function preparesStatements(dataSource: DataSource): boolean {
  return preparing.has(dataSource);
}

/** What the driver is given for `sql` on `dataSource`: the text, or the text with its name. */
export function queryConfig(
  dataSource: DataSource,
  sql: string | PreparedSql,
): string | { text: string; name: string } {
  if (typeof sql === 'string') return sql;
  return sql.name && preparing.has(dataSource) && !stale.has(sql.name)
    ? { text: sql.text, name: sql.name }
    : sql.text;
}

/**
 * After a failed statement: when PostgreSQL refused a prepared statement because its result's columns changed
 * since the connection prepared it (a migration changed a column's type under a running process: SQLSTATE 0A000,
 * "cached plan must not change result type"), this process sends that text unnamed from then on, so only the
 * requests that meet the change first fail, not every request until a restart. Whether it was that case.
 */
export function forgetIfStale(sql: string | PreparedSql, error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof sql === 'string' || !sql.name || code !== '0A000') return false;
  if (typeof message !== 'string' || !message.includes('cached plan must not change result type'))
    return false;
  stale.add(sql.name);
  return true;
}

/** The text of a statement, marked or not. */
export function sqlText(sql: string | PreparedSql): string {
  return typeof sql === 'string' ? sql : sql.text;
}
