import type { Bind } from '../common/filters/property-filters.js';
import type { RuleKind, RulePropertyOperator } from './recording-access-rule.entity.js';

/** A rule that hides the recordings it matches from someone (they are in none of its roles). */
export interface HidingRule {
  kind: RuleKind;
  urlPattern: string | null;
  propertyKey: string | null;
  propertyOperator: RulePropertyOperator | null;
  propertyValue: string | null;
}

/**
 * The start URL a pattern is matched against is cut to this many characters (the longest start URL capture
 * keeps), so a match costs at most the pattern's length times this.
 */
export const MATCHED_URL_MAX_LENGTH = 8192;

/**
 * A `url_pattern` glob as an ILIKE pattern: `*` any characters (consecutive ones are one), everything else
 * literal (`%`, `_` and `\` escaped with `\`, ILIKE's default escape). LIKE has no backtracking blow-up: a
 * pattern with k `*` costs at most about k times the URL's length.
 */
export function globToLike(glob: string): string {
  let out = '';
  let star = false;
  for (const ch of glob) {
    if (ch === '*') {
      if (!star) out += '%';
      star = true;
      continue;
    }
    star = false;
    out += ch === '%' || ch === '_' || ch === '\\' ? `\\${ch}` : ch;
  }
  return out;
}

/**
 * What one user may watch of one project's recordings: the rules that hide recordings from them (docs/recordings.md,
 * "Who may watch"). A recording is hidden when any of them matches it; with none (no rule restricts the user, or
 * the user is an admin or owner of the organization) everything may be watched and no SQL is added.
 */
export class RecordingVisibility {
  /** Everything may be watched. */
  static readonly EVERYTHING = new RecordingVisibility([]);

  constructor(readonly hiding: readonly HidingRule[]) {}

  /** Whether some recordings may be hidden (else every statement stays as it was). */
  get restricted(): boolean {
    return this.hiding.length > 0;
  }

  /**
   * The SQL condition, true (never null) when the recording row `r` (an alias of `session_recordings`) matches a
   * rule hiding it; `false` when nothing is hidden. Values are bound with `bind`. A `start_url` rule matches the
   * whole start URL (cut to MATCHED_URL_MAX_LENGTH) ignoring case, never a recording without one; a person
   * property rule reads the properties of the recording's person as stored: `exact` and `icontains` need the
   * property (as text), `is_not` matches whenever they do not hold (no person, no such property, another value).
   * `team` is the project as SQL (`r`'s own `team_id` by default): a statement that has its project as a parameter
   * passes it, so that on Citus every distributed table of the statement names the project and the statement is
   * routed to its shard (a join on `r.team_id` alone is not routed when the statement locks rows).
   */
  hiddenSql(r: string, bind: Bind, team = `${r}.team_id`): string {
    if (!this.restricted) return 'false';
    const parts: string[] = [];
    const patterns = this.hiding.filter((h) => h.kind === 'start_url').map((h) => globToLike(h.urlPattern!));
    if (patterns.length) {
      parts.push(
        `coalesce(left(${r}.start_url, ${MATCHED_URL_MAX_LENGTH}) ILIKE ANY(${bind(patterns)}::text[]), false)`,
      );
    }
    const person = (condition: string) =>
      `EXISTS (SELECT 1 FROM persons rvp WHERE rvp.team_id = ${team} AND rvp.id = ${r}.person_id AND ${condition})`;
    const holds = (h: HidingRule, operator: 'exact' | 'icontains') => {
      const text = `(rvp.properties ->> ${bind(h.propertyKey)}::text)`;
      return operator === 'exact'
        ? `${text} = ${bind(h.propertyValue)}::text`
        : `strpos(lower(${text}), lower(${bind(h.propertyValue)}::text)) > 0`;
    };
    const positive = this.hiding
      .filter((h) => h.kind === 'person_property' && h.propertyOperator !== 'is_not')
      .map((h) => holds(h, h.propertyOperator === 'icontains' ? 'icontains' : 'exact'));
    if (positive.length) parts.push(person(`(${positive.join(' OR ')})`));
    for (const h of this.hiding) {
      if (h.kind === 'person_property' && h.propertyOperator === 'is_not')
        parts.push(`NOT ${person(holds(h, 'exact'))}`);
    }
    return `(${parts.join(' OR ')})`;
  }

  /** The condition true when recording `r` may be watched; null when nothing is hidden (no condition to add). */
  visibleSql(r: string, bind: Bind, team?: string): string | null {
    return this.restricted ? `NOT ${this.hiddenSql(r, bind, team)}` : null;
  }

  /**
   * The condition true when the session `sessionId` of project `teamId` (SQL expressions, the session id in the
   * recordings' "C" collation or comparable with it) is a recording hidden by the rules, for rows that belong to
   * a session (its events, the recordings pinned to a playlist); null when nothing is hidden. A session without a
   * recording is not hidden.
   */
  hiddenSessionSql(teamId: string, sessionId: string, bind: Bind): string | null {
    if (!this.restricted) return null;
    return `EXISTS (SELECT 1 FROM session_recordings rv WHERE rv.team_id = ${teamId} AND rv.session_id = ${sessionId} AND ${this.hiddenSql('rv', bind, teamId)})`;
  }

  /**
   * `hiddenSessionSql` as a probe of the session's recording by its primary key for each row (a correlated scalar
   * subquery, which the planner never turns into a join): for a statement that stops after a bounded number of rows
   * (a page, a capped count), where a semi or anti join would read every recording of the project the rules match
   * to build its hash before the first row. Null when nothing is hidden.
   */
  hiddenSessionProbeSql(teamId: string, sessionId: string, bind: Bind): string | null {
    if (!this.restricted) return null;
    return `coalesce((SELECT ${this.hiddenSql('rv', bind, teamId)} FROM session_recordings rv WHERE rv.team_id = ${teamId} AND rv.session_id = ${sessionId}), false)`;
  }
}

/** Rules of each kind hiding recordings, for the pinned SQL of the statements applying them (test/sql). */
export const EXAMPLE_VISIBILITY = new RecordingVisibility([
  {
    kind: 'start_url',
    urlPattern: 'https://example.com/billing/*',
    propertyKey: null,
    propertyOperator: null,
    propertyValue: null,
  },
  {
    kind: 'person_property',
    urlPattern: null,
    propertyKey: 'email',
    propertyOperator: 'icontains',
    propertyValue: '@example.com',
  },
  {
    kind: 'person_property',
    urlPattern: null,
    propertyKey: 'plan',
    propertyOperator: 'is_not',
    propertyValue: 'free',
  },
]);
