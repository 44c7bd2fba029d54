import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { type HttpRound, round } from './report.js';

/**
 * The machine's load while one side of a round was measured. The bench's own processes (the load generator, the
 * two servers, PostgreSQL) keep the cores busy by themselves, so what tells a fair round from an unfair one is the
 * work of other processes: on a machine where the bench saturates every core, that work is what puts the load
 * average above the core count.
 */
export interface RoundLoad {
  /** The machine's 1-minute load average when the side's load started and when it ended. */
  loadAverage: [number, number];
  /** Cores busy on average over the measured seconds, every process of the machine (from /proc/stat). */
  busyCores: number;
  /** The part of `busyCores` that was neither the bench process, the two servers nor PostgreSQL. */
  otherCores: number;
}

/**
 * Other work above this share of the cores makes a round unfair: it is measured again (at most
 * MAX_ROUND_REPEATS times). A tenth leaves room for the machine's housekeeping (kernel threads, log rotation).
 */
export const OTHER_WORK_SHARE = 0.1;
/** How many times one round is measured again before it is kept as it is (and reported as such). */
export const MAX_ROUND_REPEATS = 2;

/**
 * Busy CPU time of the whole machine in ms, from the text of /proc/stat: the first line's user, nice, system, irq,
 * softirq and steal ticks (guest time is inside user; idle and iowait are not work), at 100 ticks a second.
 */
export function parseBusyMs(procStat: string): number {
  const line = procStat.split('\n', 1)[0];
  if (!line.startsWith('cpu ')) throw new Error('no aggregate cpu line in /proc/stat');
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + (steal || 0)) * 10;
}

/** CPU time of this process (the load generator), ms. */
function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Starts watching the machine for one measured side of a round. `stop` takes the CPU time the bench's other
 * processes (the servers and PostgreSQL) spent meanwhile, in ms, which the caller measures anyway.
 */
export function watchLoad(): { stop(benchProcessesCpuMs: number): RoundLoad } {
  const started = performance.now();
  const busyBefore = parseBusyMs(readFileSync('/proc/stat', 'utf8'));
  const ownBefore = ownCpuMs();
  const loadBefore = loadavg()[0];
  return {
    stop(benchProcessesCpuMs: number): RoundLoad {
      const wallMs = Math.max(performance.now() - started, 1);
      const busyMs = parseBusyMs(readFileSync('/proc/stat', 'utf8')) - busyBefore;
      const benchMs = benchProcessesCpuMs + (ownCpuMs() - ownBefore);
      return {
        loadAverage: [round(loadBefore), round(loadavg()[0])],
        busyCores: round(busyMs / wallMs),
        // The two clocks tick at different grains (10 ms and 1 µs): never below zero.
        otherCores: round(Math.max(0, busyMs - benchMs) / wallMs),
      };
    },
  };
}

/** Whether other work took more than OTHER_WORK_SHARE of the `cores` during a measured side. */
export function busyWithOtherWork(load: RoundLoad, cores: number): boolean {
  return load.otherCores > cores * OTHER_WORK_SHARE;
}

/** Whether other work took the cores while either side of the round was measured. */
export function roundWasBusy(r: HttpRound, cores = cpus().length): boolean {
  return !!r.load && (busyWithOtherWork(r.load.service, cores) || busyWithOtherWork(r.load.baseline, cores));
}

/**
 * One line on the machine's load during the HTTP rounds: the most other work took in a kept round, and how many
 * rounds were measured again (and which were kept busy, after MAX_ROUND_REPEATS tries).
 */
export function formatRoundLoads(results: readonly { name: string; rounds: readonly HttpRound[] }[]): string {
  const kept = results.flatMap((r) => r.rounds);
  const loads = kept.flatMap((r) => (r.load ? [r.load.service, r.load.baseline] : []));
  if (!loads.length) return '';
  const repeated = kept.reduce((n, r) => n + (r.setAside?.length ?? 0), 0);
  const stillBusy = results.flatMap((r) =>
    r.rounds.flatMap((round, i) => (roundWasBusy(round) ? [`${r.name} round ${i + 1}`] : [])),
  );
  return (
    `Machine load during the HTTP rounds: other work took at most ${Math.max(...loads.map((l) => l.otherCores))} ` +
    `cores in a kept round (a round is measured again above ${OTHER_WORK_SHARE * cpus().length}); ` +
    `1-minute load average ${Math.min(...loads.map((l) => l.loadAverage[0]))}–` +
    `${Math.max(...loads.map((l) => l.loadAverage[1]))}, the bench's own processes included; ` +
    `${repeated} measurement(s) set aside` +
    (stillBusy.length ? `; kept busy after ${MAX_ROUND_REPEATS} tries: ${stillBusy.join(', ')}.` : '.')
  );
}
