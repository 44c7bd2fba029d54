/**
 * The read scenarios with and without access controls (issue 35 item 7): each read scenario's req/s ratio by the
 * owner (no access rule applies) and by the member under access controls (`<name>+access`) in the same run, and
 * each against its ratio in a committed run from before access controls (the target: within 5 % of it).
 */
import type { HttpScenarioResult } from './report.js';
import { ACCESS_SUFFIX } from './scenarios.js';

/** How far below its ratio before access controls a scenario's ratio under them may be. */
export const ACCESS_RATIO_TOLERANCE = 0.05;

export interface AccessComparison {
  scenario: string;
  /** req/s ratio (service ÷ baseline) by the owner, whom no access rule limits. */
  without: number | null;
  /** req/s ratio by the member under access controls. */
  with: number | null;
  /** The ratio of the committed run before access controls, when it ran the scenario. */
  before: number | null;
  /** Statements per request of the service, without and with access controls. */
  statements: { without: number | null; with: number | null };
}

const ratio = (r: HttpScenarioResult | undefined) =>
  r && r.baseline.rps > 0 ? Math.round((r.service.rps / r.baseline.rps) * 100) / 100 : null;

/** Pairs each read scenario's two variants and its ratio before (`before`: the older run's `http` results). */
export function compareAccess(
  http: readonly HttpScenarioResult[],
  before: readonly HttpScenarioResult[],
): AccessComparison[] {
  const byName = new Map(http.map((r) => [r.name, r]));
  const earlier = new Map(before.map((r) => [r.name, r]));
  return http
    .filter((r) => r.read && !r.name.endsWith(ACCESS_SUFFIX))
    .map((r) => {
      const controlled = byName.get(`${r.name}${ACCESS_SUFFIX}`);
      return {
        scenario: r.name,
        without: ratio(r),
        with: ratio(controlled),
        before: ratio(earlier.get(r.name)),
        statements: { without: r.statements?.service ?? null, with: controlled?.statements?.service ?? null },
      };
    });
}

/** Whether a ratio under access controls is within the tolerance of `reference` (or above it). */
export function withinTolerance(value: number | null, reference: number | null): boolean | null {
  if (value === null || reference === null) return null;
  return value >= reference * (1 - ACCESS_RATIO_TOLERANCE);
}

export function formatAccessTable(rows: readonly AccessComparison[], beforeFile: string): string {
  const yes = (b: boolean | null) => (b === null ? '–' : b ? 'yes' : 'NO');
  return [
    `| read scenario | ratio without access controls | ratio with them | ratio before them (${beforeFile}) | with ÷ without | within 5 % of before | SQL/req without / with |`,
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.without ?? '–'} | ${r.with ?? '–'} | ${r.before ?? '–'} | ` +
        `${r.with !== null && r.without ? Math.round((r.with / r.without) * 100) / 100 : '–'} | ` +
        `${yes(withinTolerance(r.with, r.before))} | ${r.statements.without ?? '–'} / ${r.statements.with ?? '–'} |`,
    ),
  ].join('\n');
}
