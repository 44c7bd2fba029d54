import type { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';

const cache = new WeakMap<EntityMetadata, EntityColumns<ObjectLiteral>>();

/**
 * The columns of an entity's table for hand-written SQL, taken from the entity itself: the select list and the
 * row → entity mapping. A hot read that skips the query builder (see `ProjectsRepository.findById`) still
 * names no column by hand, so adding a column to the entity is the whole change.
 */
export class EntityColumns<E extends ObjectLiteral> {
  private readonly columns: readonly ColumnMetadata[];
  private readonly lists = new Map<string, string>();

  private constructor(private readonly metadata: EntityMetadata) {
    // Columns the entity keeps out of default reads (`select: false`, such as secrets) stay out here too.
    this.columns = metadata.columns.filter((c) => !c.isVirtual && c.isSelect !== false);
    for (const column of this.columns) {
      if (column.embeddedMetadata || column.transformer) {
        throw new Error(
          `EntityColumns: ${metadata.name}.${column.propertyName} is embedded or transformed; use the query builder.`,
        );
      }
    }
  }

  static of<E extends ObjectLiteral>(dataSource: DataSource, entity: EntityTarget<E>): EntityColumns<E> {
    const metadata = dataSource.getMetadata(entity);
    let columns = cache.get(metadata);
    if (!columns) {
      columns = new EntityColumns(metadata);
      cache.set(metadata, columns);
    }
    return columns as unknown as EntityColumns<E>;
  }

  /** `alias.col_a, alias.col_b, …`: every column, named by its database name (what `hydrate` reads). */
  select(alias: string): string {
    let list = this.lists.get(alias);
    if (list === undefined) {
      list = this.columns.map((c) => `${alias}.${c.databaseName}`).join(', ');
      this.lists.set(alias, list);
    }
    return list;
  }

  /** The database name of a column, by its property (for hand-written writes). */
  columnName(property: keyof E & string): string {
    const column = this.columns.find((c) => c.propertyName === property);
    if (!column) throw new Error(`EntityColumns: ${this.metadata.name} has no column ${property}.`);
    return column.databaseName;
  }

  /** The entity of a row selected with `select()` (values as the pg driver parsed them, as TypeORM keeps them). */
  hydrate(row: Record<string, unknown>): E {
    const entity = this.metadata.create() as E;
    for (const column of this.columns) {
      (entity as Record<string, unknown>)[column.propertyName] = row[column.databaseName];
    }
    return entity;
  }
}
