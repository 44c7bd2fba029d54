import { availableParallelism, loadavg } from 'node:os';

/**
 * Wall-clock bounds on a shared machine. A test that bounds how long something takes (a timeout that must fire
 * instead of a wait, a refusal that must come at once) states its margin for an idle machine; on a machine whose
 * cores other processes are using, every step waits for a core too, so the margin is stretched by how busy the
 * machine is when the bound is checked. What such a bound proves (the answer did not wait for the stall, the lock
 * or the peer that never answers) stays proved as long as the stall is longer than the stretched bound.
 */

/**
 * How many times slower than idle wall-clock work runs now: the 1-minute load average per core, at least 1
 * (load 8–10 on 2 cores: 4–5). Platforms without a load average (Windows) count as idle.
 */
export function slowdown(): number {
  return Math.max(1, loadavg()[0] / availableParallelism());
}

/** A margin stated for an idle machine, stretched by slowdown() now. */
export function margin(idleMs: number): number {
  return Math.round(idleMs * slowdown());
}
