import { describe, expect, it } from '@jest/globals';
import { parseOptions, SCENARIO_NAMES } from './options.js';

describe('parseOptions', () => {
  it('defaults to the full run', () => {
    expect(parseOptions([])).toMatchObject({
      durationSec: 10,
      warmupSec: 3,
      connections: 10,
      rounds: 2,
      scenarios: SCENARIO_NAMES,
      reseed: false,
      quick: false,
    });
  });

  it('shortens everything with --quick or BENCH_QUICK=1', () => {
    const quick = { durationSec: 3, warmupSec: 1, rounds: 1, quick: true };
    expect(parseOptions(['--quick'])).toMatchObject(quick);
    expect(parseOptions([], { BENCH_QUICK: '1' })).toMatchObject(quick);
  });

  it('lets explicit values override --quick, in any order', () => {
    expect(parseOptions(['--duration=20', '--quick'])).toMatchObject({ durationSec: 20, rounds: 1 });
  });

  it('filters scenarios and keeps the run order', () => {
    expect(parseOptions(['--scenario=scheduler,organizations-list']).scenarios).toEqual([
      'organizations-list',
      'scheduler',
    ]);
  });

  it('selects the capture load scenarios alone', () => {
    expect(parseOptions(['--scenario=capture-s3,capture-postgres', '--quick']).scenarios).toEqual([
      'capture-postgres',
      'capture-s3',
    ]);
  });

  it('selects the recordings purge alone, a partial run that leaves the docs alone', () => {
    const options = parseOptions(['--scenario=recordings-purge', '--quick']);
    expect(options.scenarios).toEqual(['recordings-purge']);
    expect(options.updateDocs).toBe(false);
    expect(SCENARIO_NAMES.indexOf('recordings-purge')).toBe(SCENARIO_NAMES.indexOf('scheduler') + 1);
  });

  it('refuses unknown options, scenarios and bad numbers', () => {
    expect(() => parseOptions(['--fast'])).toThrow("unknown option '--fast'");
    expect(() => parseOptions(['--scenario=orgs'])).toThrow("--scenario: unknown 'orgs'");
    expect(() => parseOptions(['--connections=0'])).toThrow('--connections must be a positive integer');
    expect(() => parseOptions(['--duration=1.5'])).toThrow('--duration must be a positive integer');
  });

  it('updates docs/performance.md after a full run, unless told otherwise', () => {
    expect(parseOptions([]).updateDocs).toBe(true);
    expect(parseOptions(['--no-update-docs']).updateDocs).toBe(false);
    expect(parseOptions(['--quick']).updateDocs).toBe(false);
    expect(parseOptions(['--scenario=scheduler']).updateDocs).toBe(false);
    expect(parseOptions(['--quick', '--update-docs']).updateDocs).toBe(true);
  });

  it('allows no warm-up', () => {
    expect(parseOptions(['--warmup=0']).warmupSec).toBe(0);
  });
});
