import { describe, expect, it } from '@jest/globals';
import {
  type CaptureLoadResult,
  type CaptureLoadStats,
  captureLoadTargets,
  eventsRatio,
  evaluateTargets,
  formatCaptureLoadTable,
  replaceResultsBlock,
  formatHttpTable,
  MISS_REASONS,
  formatTargetsTable,
  formatPurgeTable,
  formatStoreRequestsTable,
  purgeComparisonTarget,
  type HttpScenarioResult,
  type LoadStats,
  p99Ratio,
  PURGE_RECORDINGS_PER_SEC,
  purgeTargets,
  type RecordingsPurgeResult,
  rpsRatio,
  type SchedulerResult,
  table,
} from './report.js';

const stats = (rps: number, p50: number, p99: number, errors = 0): LoadStats => ({
  rps,
  p50,
  p99,
  errors,
  requests: rps * 10,
  cpuMsPerRequest: 1,
  rssMaxMb: 100,
});

function scenario(name: string, service: LoadStats, baseline: LoadStats, read = true): HttpScenarioResult {
  return {
    name,
    description: name,
    read,
    service,
    baseline,
    rounds: [],
    statements: { service: 3, baseline: 3, sameStatements: true, note: null },
    serialP50: { service: 4, baseline: 2 },
  };
}

const scheduler = (tickMs: number[], duplicateRuns = 0): SchedulerResult => ({
  exports: 100_000,
  tickMs,
  tickPostgresCpuMs: null,
  runsPerTick: 100_000,
  statementsPerTick: 1,
  concurrentTicks: 4,
  concurrentWallMs: 4000,
  concurrentRunsCreated: 100_000,
  duplicateRuns,
  dispatchMs: [],
  dispatchPostgresCpuMs: null,
  runsWithoutJob: 0,
  runsWithoutLog: 0,
});

describe('ratios', () => {
  it('divides the service by the baseline', () => {
    const r = scenario('x', stats(70, 10, 40), stats(100, 5, 20));
    expect(rpsRatio(r)).toBeCloseTo(0.7);
    expect(p99Ratio(r)).toBe(2);
  });
});

describe('evaluateTargets', () => {
  it('holds read scenarios to the ratio targets of issue 40, exactly at the limits included', () => {
    const targets = evaluateTargets(
      [
        scenario(
          'organizations-list',
          { ...stats(80, 10, 32), cpuMsPerRequest: 1.3 },
          { ...stats(100, 5, 20), cpuMsPerRequest: 1 },
        ),
      ],
      null,
      null,
    );
    expect(targets.map((t) => [t.name, t.value, t.limit, t.met])).toEqual([
      ['organizations-list: errors', 0, '= 0', true],
      ['organizations-list: req/s ratio', 0.8, '>= 0.8', true],
      ['organizations-list: p99 ratio', 1.6, '<= 1.6', true],
      ['organizations-list: CPU per request ratio', 1.3, '<= 1.3', true],
    ]);
  });

  it('says by how much a target is missed', () => {
    const targets = evaluateTargets(
      [
        scenario(
          'organization-retrieve',
          { ...stats(50, 10, 90), cpuMsPerRequest: 0.9 },
          { ...stats(100, 5, 30), cpuMsPerRequest: 0.4 },
        ),
      ],
      null,
      null,
    );
    const byName = (suffix: string) => targets.find((t) => t.name.endsWith(suffix))!;
    expect(byName('req/s ratio')).toMatchObject({ value: 0.5, met: false, note: '30 points short' });
    expect(byName('p99 ratio')).toMatchObject({ value: 3, met: false, note: '1.4× over' });
    expect(byName('CPU per request ratio')).toMatchObject({ value: 2.25, met: false, note: '0.95× over' });
    expect(byName('req/s ratio').reason).toBe(MISS_REASONS.ratio);
  });

  it('holds the writes to 0.75× the baseline req/s and counts their errors', () => {
    const [errors, rps] = evaluateTargets(
      [scenario('invite-create', stats(74, 1, 1, 2), stats(100, 1, 1), false)],
      null,
      null,
    );
    expect(errors).toEqual({
      name: 'invite-create: errors',
      value: 2,
      limit: '= 0',
      met: false,
      note: '2 errors on the service, 0 on the baseline',
    });
    expect(rps).toMatchObject({
      name: 'invite-create: req/s ratio',
      value: 0.74,
      limit: '>= 0.75',
      met: false,
    });
    const met = evaluateTargets(
      [scenario('organization-patch', stats(75, 1, 1), stats(100, 1, 1), false)],
      null,
      null,
    );
    expect(met.map((t) => t.met)).toEqual([true, true]);
  });

  it('adds the p50 limit of the recordings list', () => {
    const targets = evaluateTargets(
      [scenario('recordings-list', stats(100, 62, 80), stats(100, 30, 60))],
      null,
      null,
    );
    expect(targets.find((t) => t.name === 'recordings-list: service p50 (ms)')).toMatchObject({
      value: 62,
      met: false,
      note: '12 ms over',
    });
  });

  it('judges the scheduler on the median tick, on duplicates and on the dispatch', () => {
    const targets = evaluateTargets([], scheduler([2000, 5000, 2500]), null);
    expect(targets[0]).toMatchObject({ value: 2500, met: true });
    expect(targets[1]).toMatchObject({ value: 0, met: true });
    expect(targets[2]).toMatchObject({ value: 0, met: true });
    expect(evaluateTargets([], scheduler([4000], 3), null).map((t) => t.met)).toEqual([false, false, true]);
    expect(evaluateTargets([], { ...scheduler([2000]), runsWithoutJob: 1 }, null).map((t) => t.met)).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('judges capture on the median wall time of its requests', () => {
    const capture = (wallMs: number[]) => ({ events: 40000, wallMs, serviceCpuMs: wallMs.map(() => 900) });
    expect(evaluateTargets([], null, null, capture([1500, 2600, 1800]))).toEqual([
      {
        name: 'capture: 40000 events of one session stored (ms, median)',
        value: 1800,
        limit: '< 2000',
        met: true,
        note: null,
      },
    ]);
    expect(evaluateTargets([], null, null, capture([2100, 2500, 1900]))[0]).toMatchObject({
      value: 2100,
      met: false,
      note: '100 ms over',
    });
  });

  it('judges memory on the largest RSS under load', () => {
    const [rss] = evaluateTargets([], null, { idleMb: 120, maxUnderLoadMb: 260, endOfLoadMb: 200 });
    expect(rss).toMatchObject({ value: 260, met: false, note: '10 MB over' });
  });
});

describe('tables', () => {
  it('renders one row per side with aligned Markdown columns', () => {
    const table = formatHttpTable([scenario('organizations-list', stats(70, 10, 40), stats(100, 5, 20))]);
    const lines = table.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^\| scenario +\| side +\| req\/s/);
    expect(lines[1]).toMatch(/^\| -+ \| -+ \|/);
    expect(lines[2]).toContain('| service ');
    expect(lines[2]).toContain('| 0.7 ');
    expect(lines[3]).toContain('| baseline ');
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
  });

  it("shows each side's system CPU per request, or '-' for results that did not measure it", () => {
    const measured = { ...stats(70, 10, 40), cpuMsPerRequest: 0.92, systemCpuMsPerRequest: 0.18 };
    const lines = formatHttpTable([scenario('invite-create', measured, stats(100, 5, 20))]).split('\n');
    const cells = (line: string) => line.split('|').map((c) => c.trim());
    const column = cells(lines[0]).indexOf('of it system');
    expect(column).toBe(cells(lines[0]).indexOf('CPU ms/req') + 1);
    expect(cells(lines[2])[column]).toBe('0.18');
    expect(cells(lines[3])[column]).toBe('-');
  });

  it('marks missed targets', () => {
    const table = formatTargetsTable([{ name: 'x', value: 1, limit: '= 0', met: false, note: 'why' }]);
    expect(table.split('\n')[2]).toBe('| x      | 1     | = 0   | NO  | why  |');
  });
});

const captureStats = (eventsPerSec: number, errors = 0, stored = 1000): CaptureLoadStats => ({
  requests: 100,
  rps: eventsPerSec / 50,
  eventsPerSec,
  mbPerSec: 1.5,
  p50: 40,
  p99: 120,
  errors,
  cpuMsPerRequest: 8,
  rssMaxMb: 180,
  eventsSent: 1000,
  eventsStored: stored,
});

const captureLoad = (service: CaptureLoadStats, baseline: CaptureLoadStats): CaptureLoadResult => ({
  name: 'capture-postgres',
  description: 'x',
  storage: 'postgres',
  service,
  baseline,
  rounds: [],
  statements: { service: 9.2, baseline: 9.2, sameStatements: true, note: null },
  serialP50: { service: 12, baseline: 8 },
  sameStored: true,
});

describe('capture load', () => {
  it('divides events/s of the service by the baseline', () => {
    expect(eventsRatio(captureLoad(captureStats(1400), captureStats(2000)))).toBeCloseTo(0.7);
    expect(eventsRatio(captureLoad(captureStats(1400), captureStats(0)))).toBe(0);
  });

  it('holds it to no errors, every answered event stored, 0.7× the baseline and the RSS budget', () => {
    expect(
      captureLoadTargets([captureLoad(captureStats(1400), captureStats(2000))]).map((t) => [
        t.name,
        t.value,
        t.met,
      ]),
    ).toEqual([
      ['capture-postgres: errors', 0, true],
      ['capture-postgres: rrweb events stored ÷ answered', 1, true],
      ['capture-postgres: events/s ratio', 0.7, true],
      ['capture-postgres: service RSS under load (MB, max)', 180, true],
    ]);
    const missed = captureLoadTargets([
      captureLoad({ ...captureStats(1000, 2, 990), rssMaxMb: 262.4 }, captureStats(2000)),
    ]);
    expect(missed[0]).toMatchObject({ met: false, note: '2 errors on the service, 0 on the baseline' });
    expect(missed[1]).toMatchObject({ value: 0.99, met: false, note: 'service: 990 of 1000' });
    expect(missed[2]).toMatchObject({ value: 0.5, met: false, note: '20 points short' });
    expect(missed[2].reason).toBeDefined();
    expect(missed[3]).toMatchObject({ value: 262, limit: '< 250', met: false, note: '12 MB over' });
    expect(missed[3].reason).toBeDefined();
  });

  it("holds capture-s3 (packed) to 0.9× the events/s of capture-postgres, the service's, and reports the store", () => {
    const s3 = (events: number): CaptureLoadResult => ({
      ...captureLoad(
        {
          ...captureStats(events),
          store: { requests: { put: 2, get: 2, rangedGet: 0, delete: 0, other: 1 }, seconds: 20 },
        },
        captureStats(2000),
      ),
      name: 'capture-s3',
      storage: 's3',
      layout: 'packed',
    });
    const pg = captureLoad(captureStats(1000), captureStats(2000));
    const target = (r: CaptureLoadResult) =>
      captureLoadTargets([pg, r]).find((t) => t.name.includes('events/s ÷'));
    expect(target(s3(950))).toMatchObject({
      name: "capture-s3 (packed) events/s ÷ capture-postgres events/s, the service's",
      value: 0.95,
      met: true,
    });
    expect(target(s3(850))).toMatchObject({ value: 0.85, met: false, note: '5 points short' });
    const lines = formatStoreRequestsTable([s3(950)]).split('\n');
    expect(lines[2]).toMatch(/^\| capture-s3: capture, service \(packed\) \| 6 +\| 6 +\| 3 +\|/);
  });

  it('renders one row per side with the ratio on the service row', () => {
    const lines = formatCaptureLoadTable([captureLoad(captureStats(1400), captureStats(2000))]).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^\| scenario +\| side +\| req\/s +\| events\/s +\| MB\/s/);
    expect(lines[2]).toMatch(/^\| capture-postgres \| service +\| 28 +\| 1400 +\| 1.5 /);
    expect(lines[2]).toContain('| 0.7 ');
    expect(lines[3]).toMatch(/^\| +\| baseline \| 40 +\| 2000 /);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
  });
});

describe('recordings purge', () => {
  const purge = (over: Partial<RecordingsPurgeResult> = {}): RecordingsPurgeResult => ({
    batchSize: 500,
    clock: '2026-11-06T00:00:00.000Z',
    cutoff: '2026-10-08T00:00:00.000Z',
    expired: {
      recordings: 100_000,
      snapshotChunks: 300_000,
      eventKeys: 500_000,
      views: 10_000,
      sharing: 2_000,
    },
    live: { recordings: 2_000, snapshotChunks: 6_000, eventKeys: 10_000, views: 200, sharing: 40 },
    setupMs: 30_000,
    wallMs: 16_000,
    batches: 200,
    batchMs: { p50: 75.4, max: 310.2 },
    statementsPerBatch: 7,
    postgresCpuMs: 9_870,
    recordingsPerSec: 6_250,
    rowsDeleted: 912_000,
    rowsPerSec: 57_000,
    purged: { recordings: 100_000, snapshotChunks: 300_000, objects: 0, objectsLeft: 0, batches: 200 },
    capture: {
      idle: { requests: 50, errors: 0, p50: 12.34, p99: 40.1, max: 41 },
      duringPurge: { requests: 420, errors: 2, p50: 20, p99: 180.66, max: 320.4 },
    },
    problems: [],
    ...over,
  });

  it('meets both targets when verified and fast enough', () => {
    const targets = purgeTargets(purge());
    expect(targets.map((t) => [t.value, t.limit, t.met, t.note])).toEqual([
      [0, '= 0', true, null],
      [6250, `>= ${PURGE_RECORDINGS_PER_SEC}`, true, null],
    ]);
    expect(targets[1].name).toBe(
      'recordings-purge: expired recordings deleted per second (100000, batches of 500)',
    );
  });

  it('spells out the shortfall and every problem found after the purge', () => {
    const [problems, rate] = purgeTargets(
      purge({
        recordingsPerSec: 3_210.4,
        problems: ['3 expired session_recordings rows left', 'counter off'],
      }),
    );
    expect(problems).toMatchObject({
      value: 2,
      met: false,
      note: '3 expired session_recordings rows left; counter off',
    });
    expect(rate).toMatchObject({ value: 3210, met: false, note: '1790/s short' });
    expect(rate.reason).toContain('ON DELETE CASCADE');
  });

  it('renders one row with the rates, the batches and the capture latencies', () => {
    const lines = formatPurgeTable(purge()).split('\n');
    expect(lines).toHaveLength(3);
    const cells = lines[2]
      .split('|')
      .map((c) => c.trim())
      .slice(1, -1);
    expect(cells).toEqual([
      'rows',
      '100000',
      '912000',
      '500',
      '200',
      '16000',
      '6250',
      '57000',
      '7',
      '75 / 310',
      '9870',
      '12.3 / 40.1 / 41',
      '20 / 180.7 / 320 (2 errors), 420 req',
      'yes',
    ]);
    const failed = formatPurgeTable(purge({ capture: null, postgresCpuMs: null, problems: ['x'] }));
    expect(failed.split('\n')[2]).toMatch(/\| - +\| - +\| - +\| NO \(1 problems\) \|$/);
  });
});

describe('recordings purge from packed objects', () => {
  it('is compared with the purge of rows of the same run', () => {
    const base = { recordingsPerSec: 10_000 } as RecordingsPurgeResult;
    expect(purgeComparisonTarget(base, { ...base, recordingsPerSec: 9_500 })).toMatchObject({
      value: 0.95,
      limit: '>= 0.9',
      met: true,
    });
    expect(purgeComparisonTarget(base, { ...base, recordingsPerSec: 8_000 })).toMatchObject({
      value: 0.8,
      met: false,
      note: '10 points short',
    });
  });
});

describe('replaceResultsBlock', () => {
  const doc = 'intro\n<!-- bench-results:start -->\nold\n<!-- bench-results:end -->\nrest\n';

  it('replaces what is between the markers and keeps the rest', () => {
    expect(replaceResultsBlock(doc, 'new table')).toBe(
      'intro\n<!-- bench-results:start -->\n\nnew table\n\n<!-- bench-results:end -->\nrest\n',
    );
  });

  it('refuses a document without the markers', () => {
    expect(() => replaceResultsBlock('no markers', 'x')).toThrow('no <!-- bench-results:start -->');
  });
});

describe('table', () => {
  it('pads every column to its widest cell, as Prettier formats a Markdown table', () => {
    expect(
      table(
        ['name', 'n'],
        [
          ['a', 10],
          ['longer', 2],
        ],
      ),
    ).toBe(['| name   | n   |', '| ------ | --- |', '| a      | 10  |', '| longer | 2   |'].join('\n'));
  });
});
