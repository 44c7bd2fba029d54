/**
 * What the projects offer other features' SQL: fragments over `projects` for the statements that join it (an
 * organization's project summaries, a recording's retention), so that only this feature says how its table is
 * read. Defined beside the projects' own queries, which use them too.
 */
export {
  projectSummariesJsonSql,
  type ProjectSummary,
  recordingRetentionDaysSql,
} from './projects.repository.js';
