/**
 * What the persons offer other features' SQL: how a person row is selected and mapped, and its properties capped,
 * in the statements of other features that join `persons` (recording lists, exports), so that only this feature
 * says how its table is read. Defined beside the persons' own queries, which use them too.
 */
export {
  cappedPropertiesSql,
  type PersonColumns,
  personFromColumns,
  personSelectSql,
} from './persons.repository.js';
