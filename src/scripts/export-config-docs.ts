import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderConfigurationDoc } from '../config/config-docs.js';
import { FEATURES } from '../features.js';

/** Writes docs/configuration.md from the settings table; `--check` fails (exit 1) when the file differs. */
const target = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));
const text = renderConfigurationDoc(FEATURES);
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing file: drift
  }
  if (current !== text) {
    process.stderr.write(
      'docs/configuration.md is out of date: run `npm run build && npm run docs:config` and commit it\n',
    );
    process.exit(1);
  }
  process.stdout.write('docs/configuration.md is up to date\n');
} else {
  writeFileSync(target, text);
  process.stdout.write(`wrote ${target}\n`);
}
