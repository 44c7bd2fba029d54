/**
 * What the memberships offer other features' SQL: fragments over `organization_memberships` and the access rules,
 * for the statements that join them (organization lists, project access), so that only this feature says how its
 * tables are read. Defined beside the memberships' own queries, which use them too.
 */
export {
  accessRulesJsonSql,
  accessRulesOf,
  memberCountSql,
  membershipOfUserJoinSql,
  type OrganizationReach,
  projectVisibleSql,
  reachSql,
} from './memberships.repository.js';
