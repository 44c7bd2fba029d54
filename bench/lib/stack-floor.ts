/**
 * The stack's floor (`stack-floor`): the baseline's own handlers — the same statements, the same answers — served
 * by four fronts in turn (bench/baseline/fronts.ts): `node:http` alone (the baseline as the other scenarios run
 * it), Express 5, Nest on Express with the least the design card asks of every route (a global guard, a global
 * interceptor, the ValidationPipe over a query DTO), and that Nest front with the service's own request log and
 * security headers (`nest-logged`). What the Express and Nest fronts spend per request above `node:http` is what
 * any service on this stack spends at least, before any work of its own, and `nest-logged` what this service
 * spends at least with the log line and headers it writes on every request: issue 40's CPU target (≤ 1.3× the
 * baseline's per request) is read against them.
 */
import { FRONTS, type Front, type StackFront } from '../baseline/fronts.js';
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
  /** CPU per request and requests per second of every front but `node`, each ÷ `node`'s (the means' ratios). */
  cpuRatio: Record<StackFront, number>;
  rpsRatio: Record<StackFront, number>;
}

const FRONT_ORDER: readonly Front[] = FRONTS;
const STACK_FRONTS = FRONTS.filter((front): front is StackFront => front !== 'node');

/** Round `r`'s order: the fronts rotated by `r`, so each goes first, second, third and last in turn. */
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
  const fronts = Object.fromEntries(FRONT_ORDER.map((front) => [front, meanOf(front)])) as Record<
    Front,
    FloorSide
  >;
  const ratios = (of: (side: FloorSide) => number) =>
    Object.fromEntries(
      STACK_FRONTS.map((front) => {
        const base = of(fronts.node);
        return [front, base > 0 ? round(of(fronts[front]) / base) : 0];
      }),
    ) as Record<StackFront, number>;
  return {
    scenario,
    fronts,
    rounds,
    cpuRatio: ratios((side) => side.cpuMsPerRequest),
    rpsRatio: ratios((side) => side.rps),
  };
}

/**
 * Each scenario on the four fronts: the same answer checked first (a difference stops the bench), then `rounds`
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
    for (const front of STACK_FRONTS) {
      const comparison = compareAnswers(answers.get(front)!, answers.get('node')!, volatile);
      if (!comparison.equal)
        throw new Error(
          `stack-floor ${scenario.label}: the ${front} front answers differently from node:http (${comparison.difference})`,
        );
    }
    log(
      `stack-floor ${scenario.label}: the same answer from the ${FRONT_ORDER.length} fronts (${answers.get('node')!.status})`,
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
    "Stack floor: the baseline's handlers (same statements, same answers) behind node:http, Express, Nest on Express " +
      "(a global guard, a global interceptor, the ValidationPipe) and that Nest with the service's request log and " +
      'security headers (Nest+log); CPU ms/request and ratios to node:http',
    '',
    '| scenario | node:http CPU ms/req | Express CPU ms/req | Nest CPU ms/req (of it V8 workers) | Nest+log CPU ms/req | Express ÷ node CPU | Nest ÷ node CPU | Nest+log ÷ node CPU | Nest ÷ node req/s | Nest+log ÷ node req/s | errors |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of results) {
    const errors = FRONT_ORDER.reduce((sum, front) => sum + r.fronts[front].errors, 0);
    const cpu = (front: Front) => round(r.fronts[front].cpuMsPerRequest, 3);
    lines.push(
      `| ${r.scenario} | ${cpu('node')} | ${cpu('express')} | ${cpu('nest')} (${round(r.fronts.nest.v8CpuMsPerRequest, 3)}) | ` +
        `${cpu('nest-logged')} | ${r.cpuRatio.express} | ${r.cpuRatio.nest} | ${r.cpuRatio['nest-logged']} | ` +
        `${r.rpsRatio.nest} | ${r.rpsRatio['nest-logged']} | ${errors} |`,
    );
  }
  return lines.join('\n');
}
