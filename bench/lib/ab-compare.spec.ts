import { describe, expect, it } from '@jest/globals';
import {
  type AbFigures,
  type AbTrial,
  formatSummary,
  median,
  parseAbOptions,
  ratio,
  summarizeMetric,
  summarizeTrials,
  trialOrder,
  trialProblem,
  withinBand,
} from './ab-compare.js';

function figures(over: Partial<AbFigures> = {}): AbFigures {
  return {
    requests: 100,
    rps: 10,
    eventsPerSec: 200,
    cpuMsPerEvent: 0.5,
    v8CpuMsPerEvent: 0.1,
    p50: 20,
    p99: 80,
    errors: 0,
    rssMaxMb: 150,
    eventsSent: 2000,
    eventsStored: 2000,
    duplicates: 0,
    ...over,
  };
}

function trial(i: number, a: Partial<AbFigures>, b: Partial<AbFigures>): AbTrial {
  return { trial: i, first: trialOrder(i)[0], a: figures(a), b: figures(b) };
}

describe('parseAbOptions', () => {
  it('needs both sides and defaults the rest', () => {
    expect(() => parseAbOptions([])).toThrow('--a and --b are required');
    expect(parseAbOptions(['--a=/x', '--b=/y'])).toMatchObject({
      a: '/x',
      b: '/y',
      scenario: 'capture-events',
      trials: 6,
      durationSec: 10,
      warmupSec: 3,
      connections: 10,
      out: null,
      postgresUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
      keepDatabases: false,
    });
  });

  it('reads every option and the server from BENCH_DATABASE_URL', () => {
    const o = parseAbOptions(
      [
        '--a=/x',
        '--b=/x',
        '--scenario=capture-postgres',
        '--trials=8',
        '--duration=5',
        '--warmup=0',
        '--connections=4',
        '--out=bench/results/ab.json',
        '--keep-databases',
      ],
      { BENCH_DATABASE_URL: 'postgres://u@h:1/postgres' },
    );
    expect(o).toMatchObject({
      scenario: 'capture-postgres',
      trials: 8,
      durationSec: 5,
      warmupSec: 0,
      connections: 4,
      out: 'bench/results/ab.json',
      postgresUrl: 'postgres://u@h:1/postgres',
      keepDatabases: true,
    });
  });

  it('knows the three capture scenarios', () => {
    for (const scenario of ['capture-events', 'capture-postgres', 'capture-s3'])
      expect(parseAbOptions(['--a=/x', '--b=/y', `--scenario=${scenario}`]).scenario).toBe(scenario);
  });

  it('refuses what it does not know', () => {
    expect(() => parseAbOptions(['--a=/x', '--b=/y', '--scenario=events-list'])).toThrow('unknown');
    expect(() => parseAbOptions(['--a=/x', '--b=/y', '--trials=0'])).toThrow('positive integer');
    expect(() => parseAbOptions(['--a=/x', '--b=/y', '--rounds=2'])).toThrow("unknown option '--rounds=2'");
  });
});

describe('trialOrder', () => {
  it('alternates which side goes first, A first', () => {
    expect([0, 1, 2, 3].map(trialOrder)).toEqual([
      ['a', 'b'],
      ['b', 'a'],
      ['a', 'b'],
      ['b', 'a'],
    ]);
  });
});

describe('median and ratio', () => {
  it('takes the middle value, or the mean of the middle two', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('does not sort its argument in place', () => {
    const values = [3, 1, 2];
    median(values);
    expect(values).toEqual([3, 1, 2]);
  });

  it('is b over a, null over 0', () => {
    expect(ratio(200, 190)).toBeCloseTo(0.95);
    expect(ratio(0, 1)).toBeNull();
    expect(ratio(NaN, 1)).toBeNull();
  });
});

describe('summarizeMetric', () => {
  const trials = [
    trial(0, { cpuMsPerEvent: 0.5 }, { cpuMsPerEvent: 0.45 }),
    trial(1, { cpuMsPerEvent: 0.6 }, { cpuMsPerEvent: 0.66 }),
    trial(2, { cpuMsPerEvent: 0.4 }, { cpuMsPerEvent: 0.38 }),
  ];

  it('gives the medians per side and their ratio, not the median of the ratios', () => {
    const s = summarizeMetric(trials, 'cpuMsPerEvent');
    expect(s.medianA).toBe(0.5);
    expect(s.medianB).toBe(0.45);
    expect(s.ratio).toBeCloseTo(0.9);
    expect(s.paired!.median).toBeCloseTo(0.95);
  });

  it('pairs each trial with itself: min and max of b/a per trial, and how often B was lower', () => {
    const s = summarizeMetric(trials, 'cpuMsPerEvent');
    expect(s.paired!.min).toBeCloseTo(0.9);
    expect(s.paired!.max).toBeCloseTo(1.1);
    expect(s.bLower).toBe(2);
    expect(s.trials).toBe(3);
  });

  it('leaves out trials whose A is 0 from the paired ratios', () => {
    const s = summarizeMetric(
      [trial(0, { v8CpuMsPerEvent: 0 }, { v8CpuMsPerEvent: 0.1 }), trial(1, {}, { v8CpuMsPerEvent: 0.2 })],
      'v8CpuMsPerEvent',
    );
    expect(s.paired).toEqual({ min: 2, median: 2, max: 2 });
    expect(summarizeMetric([trial(0, { p99: 0 }, {})], 'p99').paired).toBeNull();
  });

  it('summarizes every metric and formats one line each', () => {
    const all = summarizeTrials(trials);
    expect(Object.keys(all)).toEqual(['eventsPerSec', 'cpuMsPerEvent', 'v8CpuMsPerEvent', 'p50', 'p99']);
    expect(all.eventsPerSec.ratio).toBe(1);
    const lines = formatSummary(all);
    expect(lines).toHaveLength(5);
    expect(lines[1]).toContain('CPU ms/event');
    expect(lines[1]).toContain('B/A 0.900');
    expect(lines[1]).toContain('B lower in 2 of 3');
  });
});

describe('withinBand', () => {
  it('holds ratios within ±5 % by default, bounds included', () => {
    expect(withinBand(1.05)).toBe(true);
    expect(withinBand(0.95)).toBe(true);
    expect(withinBand(1.051)).toBe(false);
    expect(withinBand(0.9)).toBe(false);
    expect(withinBand(null)).toBe(false);
    expect(withinBand(1.09, 0.1)).toBe(true);
  });
});

describe('trialProblem', () => {
  it('accepts a trial whose answered events were each stored once', () => {
    expect(trialProblem(figures())).toBeNull();
  });

  it('names errors, missing or duplicated rows and an empty trial', () => {
    expect(trialProblem(figures({ errors: 2 }))).toBe('2 errors');
    expect(trialProblem(figures({ eventsStored: 1980 }))).toBe('1980 of 2000 events stored');
    expect(trialProblem(figures({ duplicates: 3 }))).toBe('3 duplicated rows');
    expect(trialProblem(figures({ eventsSent: 0, eventsStored: 0 }))).toBe('no event answered');
  });
});
