import { describe, expect, it } from '@jest/globals';
import { SETTINGS } from './config/config.js';
import { FEATURES } from './features.js';

describe("the features' scheduled tasks", () => {
  const tasks = FEATURES.flatMap((f) => (f.tasks ?? []).map((task) => ({ feature: f.name, ...task })));

  it('are the timers the service runs, each under a distinct name', () => {
    expect(tasks.map((t) => `${t.feature}: ${t.name} every ${t.interval}`)).toEqual([
      'projects: project-deletion every PROJECT_DELETION_INTERVAL_SECONDS',
      'scim: scim-log-purge every SCIM_LOG_PURGE_INTERVAL_SECONDS',
      'batch-exports: batch-exports-scheduler every SCHEDULER_TICK_SECONDS',
      'session-recordings: recording-purge every RECORDING_PURGE_INTERVAL_SECONDS',
      'session-recordings: recording-orphan-sweep every RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS',
      'session-recordings: recording-packer every RECORDING_PACK_INTERVAL_SECONDS',
      'events: event-partitions every EVENTS_PURGE_INTERVAL_SECONDS',
      'activity-log: activity-log-prune every ACTIVITY_LOG_PRUNE_INTERVAL_SECONDS',
    ]);
  });

  it('each reads its interval from an integer setting of its own feature', () => {
    for (const task of tasks) {
      const feature = FEATURES.find((f) => f.name === task.feature);
      expect([task.name, Object.keys(feature?.settings ?? {})]).toEqual([
        task.name,
        expect.arrayContaining([task.interval]),
      ]);
      const s = (SETTINGS as Record<string, { parse: { accepts?: string } }>)[task.interval];
      expect([task.interval, s.parse.accepts]).toEqual([task.interval, expect.stringMatching(/^integer /)]);
    }
  });

  it('name handlers whose own interval name is the declared one', async () => {
    for (const task of tasks) {
      const handler = (await task.handler()) as unknown as { INTERVAL_NAME?: string };
      expect([task.name, handler.INTERVAL_NAME]).toEqual([task.name, task.name]);
    }
  });
});
