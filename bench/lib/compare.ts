/**
 * The bench's equality check: before timing a scenario, the service's and the baseline's answers to the same
 * request must be the same JSON text once the volatile fields (ids and timestamps of rows each side creates)
 * are removed. Key order counts: the comparison is of the serialised bytes, not only of the values.
 */

/** Removes the fields matched by the patterns: dot-separated paths where `*` matches any key or index. */
export function withoutVolatile(value: unknown, patterns: readonly string[]): unknown {
  const paths = patterns.map((p) => p.split('.'));
  const walk = (node: unknown, here: string[]): unknown => {
    if (Array.isArray(node)) return node.map((item, i) => walk(item, [...here, String(i)]));
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(node)) {
      const path = [...here, key];
      if (paths.some((p) => matches(p, path))) continue;
      out[key] = walk(child, path);
    }
    return out;
  };
  return walk(value, []);
}

function matches(pattern: readonly string[], path: readonly string[]): boolean {
  return pattern.length === path.length && pattern.every((part, i) => part === '*' || part === path[i]);
}

/** The path of the first difference between two JSON values (key order included), or null when identical. */
export function firstDifference(a: unknown, b: unknown, path = '$'): string | null {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b))
      return `${path}: array vs ${Array.isArray(a) ? typeof b : typeof a}`;
    if (a.length !== b.length) return `${path}: ${a.length} vs ${b.length} elements`;
    for (let i = 0; i < a.length; i++) {
      const diff = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (diff) return diff;
    }
    return null;
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.join('\u0000') !== kb.join('\u0000'))
      return `${path}: keys [${ka.join(', ')}] vs [${kb.join(', ')}]`;
    for (const key of ka) {
      const diff = firstDifference(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        `${path}.${key}`,
      );
      if (diff) return diff;
    }
    return null;
  }
  return Object.is(a, b) ? null : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
}

export interface BodyComparison {
  equal: boolean;
  /** Where they differ (status, non-JSON body or the first differing JSON path); null when equal. */
  difference: string | null;
}

/** Compares two HTTP answers: same status, both JSON, same serialised JSON without the volatile fields. */
export function compareAnswers(
  service: { status: number; body: string },
  baseline: { status: number; body: string },
  volatile: readonly string[],
): BodyComparison {
  if (service.status !== baseline.status) {
    return { equal: false, difference: `status ${service.status} vs ${baseline.status}` };
  }
  let a: unknown;
  let b: unknown;
  try {
    a = withoutVolatile(JSON.parse(service.body), volatile);
    b = withoutVolatile(JSON.parse(baseline.body), volatile);
  } catch {
    return { equal: false, difference: 'a body is not JSON' };
  }
  if (JSON.stringify(a) === JSON.stringify(b)) return { equal: true, difference: null };
  return { equal: false, difference: firstDifference(a, b) ?? 'serialisations differ' };
}
