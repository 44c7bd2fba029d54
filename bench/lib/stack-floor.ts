/**
 * The stack's floor (`stack-floor`): the baseline's own handlers — the same statements, the same answers — served
 * by three fronts in turn (bench/baseline/fronts.ts): `node:http` alone (the baseline as the other scenarios run
 * it), Express 5, and Nest on Express with the least the design card asks of every route (a global guard, a global
 * interceptor, the ValidationPipe over a query DTO). What the Express and Nest fronts spend per request above
 * `node:http` is what any service on this stack spends at least, before any work of its own: issue 40's CPU
 * target (≤ 1.3× the baseline's per request) is read against it.
 */
import type { Front } from '../baseline/fronts.js';
import { compareAnswers } from './compare.js';
import { fetchOnce, requestHeaders, runLoad } from './load.js';
import type { Server } from './processes.js';
import { round } from './report.js';
import { type HttpScenario, scenarioKey } from './scenarios.js';
import type { Fixture } from './seed.js';
import { mean } from './stats.js';

/** One front's measurement of one scenario in one round. */
export interface FloorSide {
  rps: number;
  p99: number;
  errors: number;
  requests: number;
  cpuMsPerRequest: number;
  /** Of it, V8's worker threads (the garbage collector's parallel and concurrent work). */
  v8CpuMsPerRequest: number;
}

export interface StackFloorResult {
  scenario: string;
  /** The mean of the rounds, per front. */
  fronts: Record<Front, FloorSide>;
  /** Each round: which front went first, and every front's figures. */
  rounds: { order: Front[]; fronts: Record<Front, FloorSide> }[];
  /** CPU per request and requests per second of `express` and `nest`, each ÷ `node`'s (the means' ratios). */
  cpuRatio: { express: number; nest: number };
  rpsRatio: { express: number; nest: number };
}

const FRONT_ORDER: readonly Front[] = ['node', 'express', 'nest'];

/** Round `r`'s order: the fronts rotated by `r`, so each goes first, second and third in turn. */
export function roundOrder(r: number): Front[] {
  return FRONT_ORDER.map((_, i) => FRONT_ORDER[(i + r) % FRONT_ORDER.length]);
}

/** The fronts' means over the rounds and their ratios to `node`'s. */
export function summarize(scenario: string, rounds: StackFloorResult['rounds']): StackFloorResult {
  const meanOf = (front: Front): FloorSide => {
    const all = rounds.map((r) => r.fronts[front]);
    return {
      rps: mean(all.map((s) => s.rps)),
      p99: mean(all.map((s) => s.p99)),
      errors: all.reduce((a, s) => a + s.errors, 0),
      requests: all.reduce((a, s) => a + s.requests, 0),
      cpuMsPerRequest: mean(all.map((s) => s.cpuMsPerRequest)),
      v8CpuMsPerRequest: mean(all.map((s) => s.v8CpuMsPerRequest)),
    };
  };
  const fronts = { node: meanOf('node'), express: meanOf('express'), nest: meanOf('nest') };
  const ratio = (a: number, b: number) => (b > 0 ? round(a / b) : 0);
  return {
    scenario,
    fronts,
    rounds,
    cpuRatio: {
      express: ratio(fronts.express.cpuMsPerRequest, fronts.node.cpuMsPerRequest),
      nest: ratio(fronts.nest.cpuMsPerRequest, fronts.node.cpuMsPerRequest),
    },
    rpsRatio: {
      express: ratio(fronts.express.rps, fronts.node.rps),
      nest: ratio(fronts.nest.rps, fronts.node.rps),
    },
  };
}

/**
 * Each scenario on the three fronts: the same answer checked first (a difference stops the bench), then `rounds`
 * rounds of `durationSec` of load per front after `warmupSec` of warm-up, the front's CPU time read from /proc.
 */
export async function benchStackFloor(options: {
  scenarios: readonly HttpScenario[];
  fixture: Fixture;
  servers: Record<Front, Server>;
  connections: number;
  durationSec: number;
  warmupSec: number;
  rounds: number;
  log: (message: string) => void;
}): Promise<StackFloorResult[]> {
  const { fixture, servers, log } = options;
  const runId = `floor-${Date.now().toString(36)}`;
  const results: StackFloorResult[] = [];
  for (const scenario of options.scenarios) {
    const headers = requestHeaders(scenarioKey(scenario, fixture));
    const answers = new Map<Front, { status: number; body: string }>();
    for (const front of FRONT_ORDER) {
      answers.set(
        front,
        await fetchOnce(
          servers[front].url,
          scenario.request(fixture, 'baseline', `${runId}-${front}-check`),
          headers,
        ),
      );
    }
    // A write's body is unique per front (invite creation's address names it), so its echo is not compared.
    const volatile = [...scenario.volatile, 'target_email'];
    for (const front of ['express', 'nest'] as const) {
      const comparison = compareAnswers(answers.get(front)!, answers.get('node')!, volatile);
      if (!comparison.equal)
        throw new Error(
          `stack-floor ${scenario.label}: the ${front} front answers differently from node:http (${comparison.difference})`,
        );
    }
    log(
      `stack-floor ${scenario.label}: the same answer from the three fronts (${answers.get('node')!.status})`,
    );
    const rounds: StackFloorResult['rounds'] = [];
    for (let r = 0; r < options.rounds; r++) {
      const order = roundOrder(r);
      const measured = {} as Record<Front, FloorSide>;
      for (const front of order) {
        const tag = `${runId}-${front}-r${r}`;
        const server = servers[front];
        if (options.warmupSec > 0)
          await runLoad(
            server.url,
            scenario.request(fixture, 'baseline', `${tag}-warmup`),
            headers,
            options.connections,
            options.warmupSec,
          );
        const before = server.cpuMs();
        const v8Before = server.v8WorkerCpuMs();
        const stats = await runLoad(
          server.url,
          scenario.request(fixture, 'baseline', tag),
          headers,
          options.connections,
          options.durationSec,
        );
        const cpuMs = server.cpuMs() - before;
        const v8Ms = server.v8WorkerCpuMs() - v8Before;
        measured[front] = {
          rps: stats.rps,
          p99: stats.p99,
          errors: stats.errors,
          requests: stats.requests,
          cpuMsPerRequest: stats.requests ? cpuMs / stats.requests : 0,
          v8CpuMsPerRequest: stats.requests ? v8Ms / stats.requests : 0,
        };
        log(
          `stack-floor ${scenario.label} round ${r + 1} ${front}: ${round(stats.rps, 0)} req/s, p99 ${stats.p99} ms, ` +
            `${stats.errors} errors, ${round(measured[front].cpuMsPerRequest, 3)} CPU ms/request ` +
            `(V8 workers ${round(measured[front].v8CpuMsPerRequest, 3)})`,
        );
      }
      rounds.push({ order, fronts: measured });
    }
    results.push(summarize(scenario.label, rounds));
  }
  return results;
}

/** The table of the run's summary and of docs/performance.md. */
export function formatStackFloorTable(results: readonly StackFloorResult[]): string {
  const lines = [
    "Stack floor: the baseline's handlers (same statements, same answers) behind node:http, Express and Nest on Express " +
      '(a global guard, a global interceptor, the ValidationPipe); CPU ms/request and ratios to node:http',
    '',
    '| scenario | node:http CPU ms/req | Express CPU ms/req | Nest CPU ms/req (of it V8 workers) | Express ÷ node CPU | Nest ÷ node CPU | Nest ÷ node req/s | errors |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of results) {
    const errors = r.fronts.node.errors + r.fronts.express.errors + r.fronts.nest.errors;
    lines.push(
      `| ${r.scenario} | ${round(r.fronts.node.cpuMsPerRequest, 3)} | ${round(r.fronts.express.cpuMsPerRequest, 3)} | ` +
        `${round(r.fronts.nest.cpuMsPerRequest, 3)} (${round(r.fronts.nest.v8CpuMsPerRequest, 3)}) | ${r.cpuRatio.express} | ${r.cpuRatio.nest} | ${r.rpsRatio.nest} | ${errors} |`,
    );
  }
  return lines.join('\n');
}
