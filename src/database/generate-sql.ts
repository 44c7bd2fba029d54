/** Rows the SQL snapshot test creates first, for examples whose statements need existing rows (foreign keys). */
export interface SqlFixture {
  userId: number;
  userUuid: string;
  organizationId: string;
  /** The organization's default project. */
  projectId: number;
  /** The session id of a recording of that project. */
  sessionId: string;
  /** The access token of that recording's sharing, enabled. */
  accessToken: string;
  /** An hourly batch export of that project (NoOp destination). */
  batchExportId: string;
  /** A run of that export, `Running`, whose job is queued (claimable). */
  runId: string;
}

/** One call of a repository method whose SQL is rendered and pinned (`test/sql/*.sql`). */
export interface SqlExample {
  /** Shown in the file when a method has several examples. */
  name?: string;
  /**
   * Arguments of the call: any values of the right types, or a function of the fixture's ids (the call runs in
   * a transaction that is rolled back).
   */
  params: unknown[] | ((fixture: SqlFixture) => unknown[]);
}

export interface GeneratedSqlMethod {
  method: string;
  examples: SqlExample[];
}

const GENERATE_SQL = Symbol('generateSql');

/**
 * Marks a repository method whose SQL is hand-tuned (or otherwise worth reviewing): `test/sql/generate-sql`
 * calls it with each example on a real database, records every statement it sends and compares them with the
 * committed `test/sql/<repository>.sql`, so a change of the SQL shows in review (as immich's `@GenerateSql`).
 * Without examples the method is called once without arguments.
 */
export function GenerateSql(...examples: SqlExample[]): MethodDecorator {
  return (target, propertyKey) => {
    const owner = target.constructor;
    const entries = (Reflect.getOwnMetadata(GENERATE_SQL, owner) as GeneratedSqlMethod[] | undefined) ?? [];
    entries.push({ method: String(propertyKey), examples: examples.length ? examples : [{ params: [] }] });
    Reflect.defineMetadata(GENERATE_SQL, entries, owner);
  };
}

/** The methods of a repository class marked with `@GenerateSql`, in declaration order. */
export function generatedSqlMethods(repositoryClass: object): GeneratedSqlMethod[] {
  return (Reflect.getOwnMetadata(GENERATE_SQL, repositoryClass) as GeneratedSqlMethod[] | undefined) ?? [];
}
