import { SETTINGS } from './config.js';

interface DocumentedSetting {
  default: unknown;
  description: string;
  parse: { accepts?: string };
}

const BYTE_UNITS: [string, number][] = [
  ['gb', 1024 ** 3],
  ['mb', 1024 ** 2],
  ['kb', 1024],
];

/** A default as an operator would write it: `unset`, `1mb`, `true`, `a,b`. */
export function formatDefault(value: unknown, accepts = ''): string {
  if (value === null || value === undefined) return 'unset';
  if (value === '') return 'empty';
  if (typeof value === 'number' && accepts.startsWith('size')) {
    const unit = BYTE_UNITS.find(([, n]) => value % n === 0);
    return unit ? `${value / unit[1]}${unit[0]}` : String(value);
  }
  if (Array.isArray(value)) return value.join(',');
  return String(value);
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A Markdown table with its columns padded to the widest cell. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, 3, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** What the page says of a feature: the settings it reads and its timers (from its manifest). */
export interface DocumentedFeature {
  name: string;
  settings?: Readonly<Record<string, unknown>>;
  tasks?: readonly { name: string; interval: string; description: string }[];
}

/** The section listing, per feature, its settings and its scheduled tasks. */
function featureSection(features: readonly DocumentedFeature[]): string {
  const rows = features
    .filter((f) => Object.keys(f.settings ?? {}).length || f.tasks?.length)
    .map((f) => [
      `\`${f.name}\``,
      cell(
        Object.keys(f.settings ?? {})
          .map((s) => `\`${s}\``)
          .join(', '),
      ),
      cell(
        (f.tasks ?? [])
          .map((t) => `\`${t.name}\` (every \`${t.interval}\` seconds): ${t.description}`)
          .join(' '),
      ),
    ]);
  if (!rows.length) return '';
  return `
## By feature

The settings each feature reads and the timers it runs, as its manifest (\`src/<feature>/<feature>.feature.ts\`)
declares them. Settings not named here are the service's own (server, database, logging, limits).

${table(['Feature', 'Settings', 'Scheduled tasks'], rows)}
`;
}

/**
 * docs/configuration.md, rendered from SETTINGS: every variable with its default, what it accepts and its
 * description, in the order of SETTINGS. Written by `npm run docs:config`; a unit test compares it with the
 * committed file, so the page cannot drift from the code.
 */
export function renderConfigurationDoc(
  features: readonly DocumentedFeature[] = [],
  settings: Record<string, DocumentedSetting> = SETTINGS,
): string {
  for (const feature of features) {
    for (const name of Object.keys(feature.settings ?? {})) {
      if (!(name in settings)) throw new Error(`feature ${feature.name} names an unknown setting ${name}`);
    }
  }
  const rows = Object.entries(settings).map(([name, s]) => [
    `\`${name}\``,
    `\`${cell(formatDefault(s.default, s.parse.accepts))}\``,
    cell(s.parse.accepts ?? ''),
    cell(s.description),
  ]);
  return `# Configuration

<!-- Generated from SETTINGS in src/config/config.ts by \`npm run docs:config\` (after \`npm run build\`).
     Do not edit: src/config/config-docs.spec.ts fails when this file differs from the settings. -->

Every setting is an environment variable, read and validated once at boot: a bad value stops the boot with one
line per bad variable, so all of them can be fixed at once. An empty or unset variable takes its default.
\`.env.example\` lists the same settings with their defaults, ready to copy to \`.env\`; the service reads the
environment only, so load that file with your process manager or \`set -a; . ./.env; set +a\`.

The Kubernetes manifests (\`deploy/k8s\`) set these variables in a ConfigMap and a Secret; see
[operations.md](operations.md).

${table(['Variable', 'Default', 'Accepts', 'Meaning'], rows)}
${featureSection(features)}`;
}
