import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
      'batch-exports: file-exports-expiry every FILE_EXPORT_EXPIRY_INTERVAL_SECONDS',
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

describe("the features' end-to-end specs (`e2e`, what `npm run test:feature` runs)", () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');

  it('name files of test/e2e/, each owned by one feature at most', () => {
    const owners = new Map<string, string[]>();
    for (const feature of FEATURES) {
      for (const name of feature.e2e ?? []) owners.set(name, [...(owners.get(name) ?? []), feature.name]);
    }
    const missing = [...owners.keys()].filter(
      (name) => !existsSync(join(root, 'test/e2e', `${name}.e2e-spec.ts`)),
    );
    expect(missing).toEqual([]);
    expect([...owners].filter(([, list]) => list.length > 1)).toEqual([]);
  });

  it('are listed as literal strings tools/test-feature.mjs can read from the manifest source', () => {
    for (const feature of FEATURES) {
      const source = readFileSync(join(root, 'src', feature.name, `${feature.name}.feature.ts`), 'utf8');
      const list = /\n {2}e2e: \[([^\]]*)\]/.exec(source);
      const read = list ? [...list[1].matchAll(/'([^']+)'/g)].map((m) => m[1]) : [];
      expect([feature.name, read]).toEqual([feature.name, [...(feature.e2e ?? [])]]);
    }
  });
});
