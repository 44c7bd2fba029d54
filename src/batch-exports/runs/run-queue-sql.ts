/*
 * The job rows the run queue writes with statements of its own rather than through pg-boss (RunQueue): the runs'
 * jobs and the scheduler's dispatch jobs.
 */
import { JOB_QUEUE_SCHEMA } from '../../database/job-queue.js';

/**
 * The jobs of runs ($2, ids; $3, their exports), as pg-boss's `insert` (12.x, `plans.insertJobs`) writes a job of
 * {id, data, singletonKey, group: {id}, startAfter?} to the queue $1: its options read from the queue's row (with
 * pg-boss's defaults), `job_now()` as the clock, the other columns at their defaults. Written here rather than
 * through `insert`, whose statement parses a JSON recordset of 22 fields per job: at 2,000 jobs that took about as
 * long as writing them (about 45 ms of 100). A run's job is new (its id is the run's, just created), so unlike
 * `insert` there is no `ON CONFLICT DO NOTHING`: a duplicate fails the transaction. The runs queue has no
 * LISTEN/NOTIFY (`notify` is not set on it), so no notification is sent. The job-queue e2e test compares the rows
 * with the ones pg-boss's `insert` writes, so an upgrade of pg-boss that changes them fails it.
 */
export const INSERT_RUN_JOBS_SQL = `
WITH run_jobs AS (
  INSERT INTO ${JOB_QUEUE_SCHEMA}.job
         (id, name, data, priority, start_after, created_on, singleton_key, group_id, expire_seconds,
          deletion_seconds, keep_until, retry_limit, retry_delay, retry_backoff, retry_delay_max, policy, dead_letter,
          heartbeat_seconds)
  SELECT r.id, q.name, jsonb_build_object('batch_export_id', r.batch_export_id), 0, s.start_after,
         ${JOB_QUEUE_SCHEMA}.job_now(), r.batch_export_id::text, r.batch_export_id::text, coalesce(q.expire_seconds, 900),
         coalesce(q.deletion_seconds, 604800), s.start_after + coalesce(q.retention_seconds, 1209600) * interval '1 second',
         coalesce(q.retry_limit, 2), coalesce(q.retry_delay, 0), coalesce(q.retry_backoff, false), q.retry_delay_max,
         q.policy, q.dead_letter, q.heartbeat_seconds
    FROM ${JOB_QUEUE_SCHEMA}.queue q
   CROSS JOIN (SELECT coalesce($4::timestamptz, ${JOB_QUEUE_SCHEMA}.job_now()) AS start_after) s
   CROSS JOIN unnest($2::uuid[], $3::uuid[]) AS r(id, batch_export_id)
   WHERE q.name = $1
  RETURNING 1
)
SELECT count(*)::int AS jobs FROM run_jobs`;

/**
 * A dispatch job ($2, the runs' ids) in the queue $1: the row INSERT_RUN_JOBS_SQL writes for a job, with a random
 * id, no group or singleton key, and `{run_ids}` as its data. One statement of its own rather than pg-boss's
 * `send`, so the tick's statements stay fixed (the scheduler's e2e test pins them).
 */
export const INSERT_DISPATCH_JOB_SQL = `
INSERT INTO ${JOB_QUEUE_SCHEMA}.job
       (id, name, data, priority, start_after, created_on, expire_seconds, deletion_seconds, keep_until, retry_limit,
        retry_delay, retry_backoff, retry_delay_max, policy, dead_letter, heartbeat_seconds)
SELECT gen_random_uuid(), q.name, jsonb_build_object('run_ids', to_jsonb($2::text[])), 0, s.start_after,
       s.start_after, coalesce(q.expire_seconds, 900), coalesce(q.deletion_seconds, 604800),
       s.start_after + coalesce(q.retention_seconds, 1209600) * interval '1 second', coalesce(q.retry_limit, 2),
       coalesce(q.retry_delay, 0), coalesce(q.retry_backoff, false), q.retry_delay_max, q.policy, q.dead_letter,
       q.heartbeat_seconds
  FROM ${JOB_QUEUE_SCHEMA}.queue q
 CROSS JOIN (SELECT ${JOB_QUEUE_SCHEMA}.job_now() AS start_after) s
 WHERE q.name = $1
RETURNING id`;

/**
 * The jobs of dispatched runs: INSERT_RUN_JOBS_SQL, except that a job that exists already is left alone (`ON
 * CONFLICT DO NOTHING` on the job's key, its queue and the run's id), and the ids of the jobs created are returned.
 * A dispatch is done once (its job is completed in the same transaction), so this only matters if it is replayed.
 */
export const INSERT_DISPATCHED_RUN_JOBS_SQL = (() => {
  const tail = 'RETURNING 1\n)\nSELECT count(*)::int AS jobs FROM run_jobs';
  if (!INSERT_RUN_JOBS_SQL.endsWith(tail)) throw new Error('INSERT_RUN_JOBS_SQL does not end as expected');
  return (
    INSERT_RUN_JOBS_SQL.slice(0, -tail.length) +
    "ON CONFLICT DO NOTHING\n  RETURNING id\n)\nSELECT coalesce(array_agg(id), '{}')::text[] AS ids FROM run_jobs"
  );
})();
