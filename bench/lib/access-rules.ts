/**
 * The bench baseline's reading of the access rules the service's one access statement answers (a project's rules
 * that apply to a member: theirs, their roles', the defaults), written again from docs/security.md without the
 * service's code, so the baseline decides what a member may see from the same rows: 404 for a project or a
 * resource at `none`, persons hidden at `query: none`, and the batch exports a list leaves out.
 */

/** One rule as the access statement renders it: `[resource, resource_id, access_level, subject]`. */
export type RuleRow = [string, string | null, string, 'member' | 'role' | 'default'];

const PROJECT_LEVELS = ['none', 'member', 'admin'];
const RESOURCE_LEVELS = ['none', 'viewer', 'editor', 'manager'];

/** Rules naming the member or a role decide together (the highest wins); only without them the default rule. */
function fromRules(rules: readonly RuleRow[], levels: readonly string[]): string | null {
  const explicit = rules.filter((r) => r[3] !== 'default');
  if (explicit.length) return levels[Math.max(...explicit.map((r) => levels.indexOf(r[2])), 0)];
  return rules.find((r) => r[3] === 'default')?.[2] ?? null;
}

/** A member's levels in one project, from their organization level and the rules that apply to them. */
export class MemberAccess {
  readonly admin: boolean;
  readonly project: string;

  constructor(
    organizationLevel: number,
    private readonly projectId: number,
    private readonly rules: readonly RuleRow[],
  ) {
    this.admin = organizationLevel >= 8;
    this.project = this.admin
      ? 'admin'
      : (fromRules(
          rules.filter((r) => r[0] === 'project' && r[1] === String(projectId)),
          PROJECT_LEVELS,
        ) ?? 'member');
  }

  /** The member's level on every object of `resource` (`editor` without a rule). */
  resource(resource: string): string {
    if (this.project === 'none') return 'none';
    if (this.admin) return 'manager';
    return (
      fromRules(
        this.rules.filter((r) => r[0] === resource && r[1] === null),
        RESOURCE_LEVELS,
      ) ?? 'editor'
    );
  }

  /**
   * Which objects of `kind` a list leaves out or keeps (`resource`: the resource they follow): null when no rule
   * hides one; `only` the ids kept when the resource is at `none`, else `except` the ids hidden.
   */
  objectFilter(kind: string, resource: string): { only: string[] | null; except: string[] } | null {
    if (this.admin) return null;
    const parentNone = this.resource(resource) === 'none';
    const byId = new Map<string, RuleRow[]>();
    for (const rule of this.rules) {
      if (rule[0] === kind && rule[1] !== null) byId.set(rule[1], [...(byId.get(rule[1]) ?? []), rule]);
    }
    const visible: string[] = [];
    const hidden: string[] = [];
    for (const [id, rules] of byId) {
      const explicit = fromRules(
        rules.filter((r) => r[3] !== 'default'),
        RESOURCE_LEVELS,
      );
      const level = explicit ?? (parentNone ? 'none' : fromRules(rules, RESOURCE_LEVELS));
      (level === 'none' ? hidden : visible).push(id);
    }
    if (parentNone) return { only: visible, except: [] };
    return hidden.length ? { only: null, except: hidden } : null;
  }
}

/** Whether `level` reaches `need` on the resource scale. */
export function reaches(level: string, need: 'viewer' | 'editor'): boolean {
  return RESOURCE_LEVELS.indexOf(level) >= RESOURCE_LEVELS.indexOf(need);
}

/**
 * A recording access rule's start URL glob as an ILIKE pattern, as docs/recordings.md describes it: `*` any
 * characters (consecutive ones one), `%`, `_` and `\` escaped with `\`.
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
