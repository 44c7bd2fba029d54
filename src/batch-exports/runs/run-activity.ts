/** What the activity log entry of a run's attempt needs of the claimed run and its export. */
export interface ClaimedRunForLog {
  id: string;
  batch_export_id: string;
  organization_id: string;
  team_id: number;
  name: string;
  model: string;
  destination_type: string;
  data_interval_start: Date;
  data_interval_end: Date;
}

/**
 * The INSERT of the activity log entry (src/activity-log) of a run's attempt: `run_started` on the export
 * (scope BatchExport), by the system, with the run, its interval and its destination in `detail.context`. The
 * claim runs it in its transaction, so an export never runs without its entry.
 */
export function runStartedEntry(run: ClaimedRunForLog, now: Date, attempt: number): [string, unknown[]] {
  return [
    `INSERT INTO activity_logs (organization_id, team_id, is_system, activity, scope, item_id, detail)
     VALUES ($1, $2, true, 'run_started', 'BatchExport', $3, $4::jsonb)`,
    [
      run.organization_id,
      run.team_id,
      run.batch_export_id,
      JSON.stringify({
        id: run.batch_export_id,
        name: run.name,
        short_id: null,
        type: null,
        changes: null,
        trigger: null,
        context: {
          run_id: run.id,
          attempt,
          model: run.model,
          destination_type: run.destination_type,
          data_interval_start: run.data_interval_start.toISOString(),
          data_interval_end: run.data_interval_end.toISOString(),
          started_at: now.toISOString(),
        },
      }),
    ],
  ];
}
