import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  busyWithOtherWork,
  formatRoundLoads,
  parseBusyMs,
  type RoundLoad,
  roundWasBusy,
  watchLoad,
} from './machine-load.js';
import { readCpuMs } from './processes.js';
import type { HttpRound, LoadStats } from './report.js';

const load = (otherCores: number): RoundLoad => ({ loadAverage: [1, 2], busyCores: 2, otherCores });
const stats: LoadStats = { rps: 1, p50: 1, p99: 1, errors: 0, requests: 1, cpuMsPerRequest: 1, rssMaxMb: 1 };
const round = (service: number, baseline: number): HttpRound => ({
  first: 'service',
  service: stats,
  baseline: stats,
  load: { service: load(service), baseline: load(baseline) },
});

describe('parseBusyMs', () => {
  it('adds user, nice, system, irq, softirq and steal ticks of the aggregate line, at 10 ms a tick', () => {
    const text =
      'cpu  100 20 30 5000 700 4 6 1 50 0\ncpu0 50 10 15 2500 350 2 3 0 25 0\nintr 1 2 3\nctxt 99\nprocs_running 3\n';
    expect(parseBusyMs(text)).toBe((100 + 20 + 30 + 4 + 6 + 1) * 10);
  });

  it('refuses a text without the aggregate line', () => {
    expect(() => parseBusyMs('cpu0 1 2 3 4 5 6 7\n')).toThrow('no aggregate cpu line');
  });
});

describe('the repeat rule', () => {
  it('repeats a round when other work took more than a tenth of the cores on either side', () => {
    expect(busyWithOtherWork(load(0.2), 2)).toBe(false);
    expect(busyWithOtherWork(load(0.21), 2)).toBe(true);
    expect(roundWasBusy(round(0, 0.5), 2)).toBe(true);
    expect(roundWasBusy(round(0.5, 0), 2)).toBe(true);
    expect(roundWasBusy(round(0.1, 0.1), 2)).toBe(false);
    expect(roundWasBusy({ first: 'baseline', service: stats, baseline: stats }, 2)).toBe(false);
  });
});

describe('watchLoad', () => {
  it("counts another process's CPU as other work, and not when it is the bench's", async () => {
    // A process that spins for 1.5 s: other work, unless its CPU is handed to `stop` as the bench's.
    const watch = watchLoad();
    const started = performance.now();
    const spinner = spawn(process.execPath, [
      '-e',
      'const end = Date.now() + 1500; while (Date.now() < end);',
    ]);
    let spinnerMs = 0;
    const sampler = setInterval(() => {
      try {
        spinnerMs = readCpuMs(spinner.pid!);
      } catch {
        // It ended.
      }
    }, 20);
    await once(spinner, 'exit');
    clearInterval(sampler);
    const asOther = watch.stop(0);
    const asBench = watch.stop(spinnerMs);
    const spinnerCores = spinnerMs / (performance.now() - started);
    expect(spinnerMs).toBeGreaterThan(300);
    // Whatever else the machine ran only adds to what the spinner took (less a tick of 10 ms either way).
    expect(asOther.otherCores).toBeGreaterThan(spinnerCores - 0.05);
    expect(asOther.busyCores).toBeGreaterThanOrEqual(asOther.otherCores);
    expect(asOther.otherCores - asBench.otherCores).toBeGreaterThan(spinnerCores - 0.05);
    expect(asBench.loadAverage).toHaveLength(2);
  }, 20_000);
});

describe('formatRoundLoads', () => {
  it('says the most other work in a kept round, the load average range and the measurements set aside', () => {
    const busy = round(0.9, 0);
    const kept = round(0.05, 0.12);
    kept.load!.service.loadAverage = [1.5, 3.1];
    const line = formatRoundLoads([
      { name: 'a', rounds: [{ ...kept, setAside: [busy, busy] }] },
      { name: 'b', rounds: [round(0.1, 0.02), { ...busy, setAside: [busy, busy] }] },
    ]);
    expect(line).toContain('other work took at most 0.9 cores');
    expect(line).toContain('load average 1–3.1');
    expect(line).toContain('4 measurement(s) set aside');
    expect(line).toContain('kept busy after 2 tries: b round 2.');
    expect(
      formatRoundLoads([{ name: 'c', rounds: [{ first: 'service', service: stats, baseline: stats }] }]),
    ).toBe('');
  });
});
