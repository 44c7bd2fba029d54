import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { engineSummary, type EngineMeasurement, type EnginesResult, serverCpuMs } from './engines.js';
import { parseOptions } from './options.js';

const measurement = (over: Partial<EngineMeasurement>): EngineMeasurement => ({
  engine: 'citus',
  scenario: 'capture-events',
  round: 1,
  rps: 0,
  eventsPerSec: 0,
  p50: 0,
  p99: 0,
  errors: 0,
  unit: 'event',
  serviceCpuMsPerUnit: 0,
  serviceCores: 0,
  nodes: null,
  eventsStored: 0,
  eventsSent: 0,
  loadAverage: 0,
  ...over,
});

describe('the citus scenario', () => {
  it('is one of the scenarios of a full run', () => {
    expect(parseOptions([]).scenarios).toContain('citus');
    expect(parseOptions(['--scenario=citus']).scenarios).toEqual(['citus']);
  });

  it("counts a server's children, also those that have exited", async () => {
    // This process stands for a postmaster: a child that burns 400 ms of its own CPU time (not of wall time, which
    // a loaded machine would give it less of), then exits and is reaped.
    const before = serverCpuMs(process.pid);
    const child = spawn(process.execPath, ['-e', 'while (process.cpuUsage().user < 400_000);']);
    await once(child, 'exit');
    expect(serverCpuMs(process.pid) - before).toBeGreaterThanOrEqual(200);
  });

  it('averages the rounds of an engine and a scenario, and sums their counts', () => {
    const nodes = (coordinator: number, worker: number) => [
      { node: 'coordinator', cpuMsPerUnit: coordinator, cores: 0.5 },
      { node: 'worker1', cpuMsPerUnit: worker, cores: 0.2 },
    ];
    const result = {
      measurements: [
        measurement({
          round: 1,
          eventsPerSec: 1000,
          eventsStored: 10,
          eventsSent: 10,
          nodes: nodes(0.4, 0.2),
        }),
        measurement({
          round: 2,
          eventsPerSec: 2000,
          eventsStored: 20,
          eventsSent: 20,
          nodes: nodes(0.6, 0.1),
        }),
        measurement({ engine: 'postgres', eventsPerSec: 3000, nodes: nodes(0.3, 0) }),
      ],
    } as EnginesResult;
    const summary = engineSummary(result);
    expect(summary.map((s) => s.engine)).toEqual(['postgres', 'citus']);
    const citus = summary[1].m;
    expect(citus.eventsPerSec).toBe(1500);
    expect(citus.eventsStored).toBe(30);
    expect(citus.nodes).toEqual([
      { node: 'coordinator', cpuMsPerUnit: 0.5, cores: 0.5 },
      { node: 'worker1', cpuMsPerUnit: 0.15, cores: 0.2 },
    ]);
  });
});
