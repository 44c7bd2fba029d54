import { Transform, type Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { ColumnKind, ExportRow } from '../export-models.js';
import { ExportError, nonRetryable, retryable, type AttemptStopped } from '../export-errors.js';
import { isPrivateAddress } from '../egress.js';
import {
  APPLICATION_NAME,
  classifyPgError,
  copyField,
  endClient,
  ident,
  INSERT_PARAMETERS,
  PG_TYPES,
  REDSHIFT_TYPES,
  sqlValue,
  STAGE_DROP_TIMEOUT_MS,
} from './postgres-sql.js';
import type { DeliveryContext, DestinationWriter } from './destination.js';
import { assertMergeIndex, mergeStatements, nullKeyCount, type MergeTarget } from './merge.js';
import { sweepStagingTables } from './redshift-staging.js';
import {
  tableMergeStatements,
  planTable,
  readTableShape,
  SCHEMA_EVOLUTION_KEY,
  type TablePlan,
  type TableShape,
  valueSql,
} from './table-schema.js';

export { classifyPgError, ident } from './postgres-sql.js';

/**
 * PostgreSQL and Redshift (PostgreSQL's wire): the table is created when missing with the model's columns
 * (PostgreSQL: primary key on the merge key); one that exists is written as it is (table-schema.ts: its
 * columns and types, columns added only with use_automatic_schema_evolution); each attempt loads the run's rows into a staging table
 * (`stage_<table>_<run>`: temporary on PostgreSQL, a table dropped and recreated by a retry on Redshift) with
 * COPY (PostgreSQL) or multi-row INSERTs (Redshift, which has no COPY from a client), then merges them into the table in one transaction:
 * a row replaces the stored one of its key only when a version column is greater, so a retried or repeated
 * run never duplicates or regresses a row. Every statement is bounded by BATCH_EXPORT_STATEMENT_TIMEOUT_MS: the
 * session's `statement_timeout` on the server, and a timer of the client a little longer (a server that does not
 * apply it); a statement past it fails the attempt retryably.
 */
export class PostgresWriter implements DestinationWriter {
  private client: pg.Client | null = null;
  private copy: Writable | null = null;
  private copyDone: Promise<void> | null = null;
  private bytes = 0;
  /**
   * Redshift: the staging table may exist in the destination (from just before its CREATE until the merge or
   * the drop after a failure committed).
   */
  private stageLeft = false;
  /** The server process of the attempt's connection (Redshift: ended before its staging table is dropped). */
  private backendPid: number | null = null;
  private endpoint: { host: string; address: string } | null = null;
  private readonly redshift: boolean;
  private readonly schema: string;
  private readonly table: string;
  private readonly stage: string;
  private readonly stagePrefix: string;
  private readonly columns: string;
  /** How this attempt writes into the destination table (read when the attempt opens). */
  private plan: TablePlan | null = null;

  constructor(private readonly ctx: DeliveryContext) {
    this.redshift = ctx.type === 'Redshift';
    this.schema = (ctx.config.schema as string | undefined) || 'public';
    const tableName = ctx.config.table_name as string;
    this.table = `${ident(this.schema)}.${ident(tableName)}`;
    // Redshift: one table per attempt (`stage_<table>_<run>_<attempt>`), so an attempt that lost its worker
    // and the next one never share it.
    this.stagePrefix = `stage_${tableName.slice(0, 32)}_`;
    const stageName =
      `${this.stagePrefix}${ctx.runId.replace(/-/g, '').slice(-16)}` +
      (this.redshift ? `_${ctx.attempt}` : '');
    // PostgreSQL: a temporary table (no WAL, gone with the connection if the attempt dies); Redshift: a table
    // in the destination's schema, dropped by the attempt however it ends, else by a later attempt's sweep.
    this.stage = this.redshift ? `${ident(this.schema)}.${ident(stageName)}` : ident(stageName);
    this.columns = ctx.model.columns.map((c) => ident(c.name)).join(', ');
  }

  private get port(): number {
    return (this.ctx.config.port as number | undefined) ?? 5432;
  }

  async open(): Promise<void> {
    const host = this.ctx.config.host as string;
    const address = await this.ctx.egress.resolve(host, this.port);
    this.endpoint = { host, address };
    this.client = await this.connect(host, address);
    this.backendPid = (this.client as unknown as { processID?: number | null }).processID ?? null;
    const types = this.redshift ? REDSHIFT_TYPES : PG_TYPES;
    const definition = this.ctx.model.columns.map((c) => `${ident(c.name)} ${types[c.kind]}`).join(', ');
    // The primary key of a table the export creates: the model's merge key, or MERGE's `primary_key`.
    const key = this.ctx.incremental.primaryKey.map(ident).join(', ');
    await this.createTableIfMissing(`${definition}${this.redshift ? '' : `, PRIMARY KEY (${key})`}`);
    await this.prepareTable(types);
    if (this.ctx.incremental.mode === 'MERGE' && !this.redshift) await this.assertMergeIndex();
    if (this.redshift) {
      try {
        await sweepStagingTables(this.client!, this.ctx, this.schema, this.stagePrefix);
      } catch (err) {
        throw this.classify(err, 'listing the staging tables');
      }
    }
    await this.query(`DROP TABLE IF EXISTS ${this.stage}`, 'dropping an earlier staging table');
    this.stageLeft = this.redshift;
    await this.query(
      `CREATE ${this.redshift ? '' : 'TEMPORARY '}TABLE ${this.stage} (${definition})`,
      'creating the staging table',
    );
  }

  /**
   * Creates the destination table when the catalog has none (`IF NOT EXISTS` still, for two runs creating it at
   * once). An existing table is left alone without a statement on it: a server with Citus loaded looks the table
   * up under a lock for `CREATE TABLE IF NOT EXISTS`, which then waits behind any lock held on the table.
   */
  private async createTableIfMissing(definition: string): Promise<void> {
    let found: boolean;
    try {
      const { rows } = await this.client!.query<{ found: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2) AS found`,
        [this.schema, this.ctx.config.table_name as string],
      );
      found = rows[0]?.found === true;
    } catch (err) {
      throw this.classify(err, 'looking up the destination table');
    }
    if (found) return;
    await this.query(
      `CREATE TABLE IF NOT EXISTS ${this.table} (${definition})`,
      'creating the destination table',
    );
  }

  /**
   * Reads the destination table as it is and plans the run's writes into it (table-schema.ts): a table lacking
   * some of the model's columns gets them added only with use_automatic_schema_evolution, else the columns it
   * has are exported (an INFO line names the others); a table the run cannot write into fails it before
   * anything is altered.
   */
  private async prepareTable(types: Record<ColumnKind, string>): Promise<void> {
    const tableName = this.ctx.config.table_name as string;
    let shape: TableShape;
    try {
      shape = await readTableShape(
        this.client!,
        this.schema,
        tableName,
        this.ctx.incremental.primaryKey,
        this.redshift,
      );
    } catch (err) {
      throw classifyPgError(err, 'reading the destination table');
    }
    const evolve = this.ctx.config[SCHEMA_EVOLUTION_KEY] === true;
    // The key and versions the run merges on: the model's (APPEND), or MERGE's `primary_key` / `version_key`.
    const keys = {
      columns: this.ctx.model.columns,
      key: this.ctx.incremental.primaryKey,
      versionColumns: this.ctx.incremental.versionKey,
    };
    this.plan = planTable(keys, shape, { evolve, redshift: this.redshift, table: this.table });
    for (const column of this.plan.add) {
      try {
        await this.client!.query(
          `ALTER TABLE ${this.table} ADD COLUMN ${ident(column.name)} ${types[column.kind]}`,
        );
      } catch (err) {
        // 42701: added meanwhile by another run.
        if ((err as { code?: string }).code !== '42701') {
          throw this.classify(err, `adding the column ${column.name} to the destination table`);
        }
      }
    }
    if (this.plan.add.length) {
      await this.ctx.log(
        'INFO',
        `Added ${this.plan.add.map((c) => `${c.name} ${types[c.kind]}`).join(', ')} to the destination table ` +
          `${this.table} (${SCHEMA_EVOLUTION_KEY}).`,
      );
    }
    if (this.plan.leftOut.length) {
      await this.ctx.log(
        'INFO',
        `The destination table ${this.table} has no column ${this.plan.leftOut.join(', ')}: ` +
          `${this.plan.leftOut.length === 1 ? 'it is' : 'they are'} not exported. Add them to the table, or set ` +
          `${SCHEMA_EVOLUTION_KEY} on the export's destination to let runs add the model's missing columns.`,
      );
    }
  }

  /** The COPY into the staging table (PostgreSQL), started on first use. */
  private startCopy(): Writable {
    const stream = this.client!.query(copyFrom(`COPY ${this.stage} (${this.columns}) FROM STDIN`));
    this.copy = stream;
    this.copyDone = new Promise<void>((resolve, reject) => {
      stream.on('finish', () => resolve());
      stream.on('error', reject);
    });
    this.copyDone.catch(() => undefined);
    return stream;
  }

  /** PostgreSQL: the source's COPY text straight into the staging table (rows are counted by their line ends). */
  get copyStream(): ((rows: Readable) => Promise<{ records: number }>) | undefined {
    if (this.redshift) return undefined;
    return async (rows: Readable) => {
      const target = this.client!.query(copyFrom(`COPY ${this.stage} (${this.columns}) FROM STDIN`));
      let records = 0;
      const count = new Transform({
        transform: (chunk: Buffer, _encoding, done) => {
          this.bytes += chunk.length;
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) records++;
          done(null, chunk);
        },
      });
      try {
        await pipeline(rows, count, target, { signal: this.ctx.signal });
      } catch (err) {
        if (this.ctx.signal.aborted) throw this.ctx.signal.reason;
        throw this.classify(err, 'loading the staging table');
      }
      return { records };
    };
  }

  async write(rows: readonly ExportRow[]): Promise<void> {
    if (!rows.length) return;
    if (!this.redshift) {
      this.copy ??= this.startCopy();
      const columns = this.ctx.model.columns;
      let text = '';
      for (const row of rows) {
        text += columns.map((c) => copyField(c.kind, row[c.name])).join('\t') + '\n';
      }
      const chunk = Buffer.from(text, 'utf8');
      this.bytes += chunk.length;
      if (!this.copy.write(chunk)) {
        await Promise.race([
          new Promise<void>((resolve) => this.copy!.once('drain', resolve)),
          this.copyDone!.then(() => undefined),
        ]);
      }
      return;
    }
    await this.insertRows(rows);
  }

  private async insertRows(rows: readonly ExportRow[]): Promise<void> {
    const columns = this.ctx.model.columns;
    const perStatement = Math.max(1, Math.floor(INSERT_PARAMETERS / columns.length));
    for (let start = 0; start < rows.length; start += perStatement) {
      const slice = rows.slice(start, start + perStatement);
      const values: unknown[] = [];
      const tuples = slice.map((row) => {
        const placeholders = columns.map((c) => {
          const value = sqlValue(c.kind, row[c.name]);
          values.push(value);
          if (value !== null) this.bytes += Buffer.byteLength(String(value));
          return `$${values.length}`;
        });
        return `(${placeholders.join(', ')})`;
      });
      await this.query(
        `INSERT INTO ${this.stage} (${this.columns}) VALUES ${tuples.join(', ')}`,
        'loading the staging table',
        values,
      );
    }
  }

  async finish(): Promise<{ bytes: number }> {
    if (this.copy) {
      this.copy.end();
      try {
        await this.copyDone;
      } catch (err) {
        throw this.classify(err, 'loading the staging table');
      }
      this.copy = null;
    }
    const merge = this.ctx.incremental.mode === 'MERGE' ? this.mergeTarget() : null;
    if (merge) await this.logNullKeys(merge);
    await this.query('BEGIN', 'merging');
    try {
      if (merge) {
        for (const sql of mergeStatements(merge)) await this.query(sql, 'merging into the destination table');
      } else {
        for (const statement of tableMergeStatements(
          this.plan!,
          this.ctx.model,
          this.table,
          this.stage,
          this.redshift,
        )) {
          await this.query(statement, 'merging into the destination table');
        }
      }
      await this.query(`DROP TABLE ${this.stage}`, 'dropping the staging table');
      await this.query('COMMIT', 'merging');
      this.stageLeft = false;
    } catch (err) {
      await this.client?.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    return { bytes: this.bytes };
  }

  /** MERGE: the destination table, the staging table and the export's keys (merge.ts). */
  private mergeTarget(): MergeTarget {
    return {
      redshift: this.redshift,
      table: this.table,
      stage: this.stage,
      // The columns the run writes (those the table has, table-schema.ts), which the staging table also holds.
      columns: this.plan!.columns.map((c) => c.name),
      values: this.plan!.columns.map((c) => valueSql(ident(c.name), c.kind, this.plan!.types.get(c.name))),
      settings: this.ctx.incremental,
    };
  }

  /** MERGE on PostgreSQL: the table must have a unique index on `primary_key` (merge.ts); else the run fails. */
  private async assertMergeIndex(): Promise<void> {
    try {
      await assertMergeIndex(this.client!, this.schema, this.ctx.config.table_name as string, [
        ...this.ctx.incremental.primaryKey,
      ]);
    } catch (err) {
      if (err instanceof ExportError) throw err;
      throw this.classify(err, 'reading the indexes of the destination table');
    }
  }

  /** MERGE: a WARNING line when staged rows have a null in the primary key (they are not merged). */
  private async logNullKeys(merge: MergeTarget): Promise<void> {
    let count: number;
    try {
      const { rows } = await this.client!.query<{ n: number }>(nullKeyCount(merge));
      count = rows[0].n;
    } catch (err) {
      throw this.classify(err, 'reading the staging table');
    }
    if (count > 0) {
      await this.ctx.log(
        'WARNING',
        `${count} ${count === 1 ? 'row has' : 'rows have'} a null in the primary key ` +
          `(${this.ctx.incremental.primaryKey.join(', ')}) and ${count === 1 ? 'was' : 'were'} not merged.`,
      );
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    if (this.copy) {
      // A failed or stopped attempt: abandon the COPY, then the staging table (a retry drops it anyway).
      this.copy.destroy();
      this.copy = null;
    }
    if (this.stageLeft) {
      // Redshift: an attempt that did not merge leaves no staging table behind in the destination's schema,
      // whatever ended it (a failure, a cancel, the attempt's deadline, a lost heartbeat, a shutdown). A stopped
      // attempt's connection was closed, so over a connection of its own.
      const stopped = this.ctx.signal.aborted ? (this.ctx.signal.reason as AttemptStopped).reason : null;
      await this.dropStage(stopped ? null : client, stopped);
    }
    await endClient(client);
  }

  /**
   * Drops the Redshift staging table over `client`, else (stopped, or `client` failing) over a connection of its
   * own, after ending the attempt's server process: a stopped attempt's statement (a load, a CREATE) may still
   * run there, and must neither hold the table nor commit after the drop. A failure is logged with the table's
   * name (WARNING), not thrown: a later attempt's sweep drops it.
   */
  private async dropStage(client: pg.Client | null, stopped: AttemptStopped['reason'] | null): Promise<void> {
    this.stageLeft = false;
    if (client) {
      try {
        await client.query('ROLLBACK').catch(() => undefined);
        await client.query(`DROP TABLE IF EXISTS ${this.stage}`);
        return;
      } catch {
        // The attempt's connection failed: over a connection of its own, below.
      }
    }
    let own: pg.Client | null = null;
    try {
      own = await this.connect(this.endpoint!.host, this.endpoint!.address, false);
      // A stopped statement may still hold the table on the server for a while: bounded.
      await own.query(`SET statement_timeout = ${STAGE_DROP_TIMEOUT_MS}`);
      if (this.backendPid !== null) await this.endBackend(own, this.backendPid);
      await own.query(`DROP TABLE IF EXISTS ${this.stage}`);
    } catch (err) {
      await this.ctx
        .log(
          'WARNING',
          `The staging table ${this.stage} of this ${stopped ? `${stopped} ` : 'failed '}attempt could not be ` +
            `dropped: ${(err as Error).message}. It is dropped by the sweep of a later attempt exporting to this table, ` +
            'or can be dropped by hand.',
        )
        .catch(() => undefined);
    } finally {
      await own?.end().catch(() => undefined);
    }
  }

  /**
   * Ends the attempt's server process. PostgreSQL: only while it is still a session of this user and of this
   * service (`application_name`), so a process id reused by another session is never touched. Redshift (whose
   * `pg_stat_activity` has neither column): by its id, which only the user's own sessions (or a superuser's)
   * may be ended by. A failure is left to the drop's lock wait.
   */
  private async endBackend(own: pg.Client, pid: number): Promise<void> {
    try {
      await own.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE pid = $1 AND usename = current_user AND application_name = '${APPLICATION_NAME}'`,
        [pid],
      );
    } catch {
      await own.query('SELECT pg_terminate_backend($1)', [pid]).catch(() => undefined);
    }
  }

  /** A connection to the destination; closed when the attempt is stopped unless `stoppable` is false. */
  private async connect(host: string, address: string, stoppable = true): Promise<pg.Client> {
    const base: pg.ClientConfig = {
      host: address,
      port: this.port,
      user: this.ctx.config.user as string,
      password: this.ctx.config.password as string,
      database: this.ctx.config.database as string,
      connectionTimeoutMillis: 10000,
      // The client's own timer, past the server's statement_timeout (set below): a server that does not apply
      // it still cannot hold the attempt.
      query_timeout: this.ctx.statementTimeoutMs + 2000,
      application_name: APPLICATION_NAME,
    };
    const tls = {
      servername: host,
      rejectUnauthorized: !this.ctx.config.has_self_signed_cert,
    };
    const attempt = async (ssl: pg.ClientConfig['ssl']) => {
      const client = new pg.Client({ ...base, ssl });
      client.on('error', () => undefined);
      const onAbort = () => void endClient(client);
      if (stoppable) this.ctx.signal.addEventListener('abort', onAbort, { once: true });
      try {
        await client.connect();
        await client.query(`SET statement_timeout = ${Math.floor(this.ctx.statementTimeoutMs)}`);
        return client;
      } catch (err) {
        this.ctx.signal.removeEventListener('abort', onAbort);
        await client.end().catch(() => undefined);
        throw err;
      }
    };
    try {
      return await attempt(tls);
    } catch (err) {
      const noTls = /does not support SSL/i.test((err as Error).message ?? '');
      if (!noTls) throw classifyPgError(err, `connecting to ${host}`);
      // Only a server in a private network (reachable at all only with BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS)
      // may be used without TLS in production.
      if (this.ctx.production && !isPrivateAddress(address)) {
        throw nonRetryable(`connecting to ${host}: the server does not support TLS connections.`);
      }
      await this.ctx.log(
        'WARNING',
        `The PostgreSQL server ${host} does not support TLS; connected without it.`,
      );
      try {
        return await attempt(false);
      } catch (plainErr) {
        throw classifyPgError(plainErr, `connecting to ${host}`);
      }
    }
  }

  private async query(sql: string, where: string, values?: unknown[]): Promise<void> {
    try {
      await this.client!.query(sql, values);
    } catch (err) {
      throw this.classify(err, where);
    }
  }

  /** classifyPgError, naming the statement deadline when the statement was stopped by it. */
  private classify(err: unknown, where: string): ExportError {
    const e = err as { code?: string; message?: string };
    if (e.code === '57014' || e.message === 'Query read timeout') {
      return retryable(
        `${where}: the statement did not end within ${this.ctx.statementTimeoutMs} ms ` +
          `(BATCH_EXPORT_STATEMENT_TIMEOUT_MS) — blocked by a lock or too slow; the attempt is retried.`,
      );
    }
    return classifyPgError(err, where);
  }
}
