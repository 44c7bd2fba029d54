// The e2e suite (or the given test files) on a Citus test cluster (docs/citus.md, "The e2e suite on the cluster").
//
//   npm run test:citus                          every e2e file, one at a time, against the coordinator
//   npm run test:citus -- test/e2e/events.e2e-spec.ts test/e2e/persons.e2e-spec.ts
//
// Starts the cluster first (`tools/citus.mjs up`: idempotent, so a running one is reused; CITUS_PORT,
// CITUS_DATA_DIR and the other settings of that tool apply), then runs jest with TEST_DATABASE_URL at the
// coordinator and TEST_PG_ENGINE=citus. The cluster is left running: `npm run citus:down` stops it.
// Exit 3, with citus:up's line saying why, when the cluster cannot start; else jest's exit status.
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const up = spawnSync(process.execPath, [resolve(root, 'tools/citus.mjs'), 'up'], {
  cwd: root,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
const lines = (up.stdout ?? '').trim().split('\n');
if (up.status !== 0) {
  process.stderr.write(`${lines.join('\n')}\n`);
  process.exit(up.status ?? 1);
}
const url = lines[lines.length - 1];
const files = process.argv.slice(2);
process.stderr.write(`test:citus: ${files.length ? files.join(' ') : 'the e2e suite'} on ${url}\n`);
const jest = spawnSync(
  'npx',
  // The files alone (`--selectProjects` after them would be read as more project names); all are e2e files.
  ['jest', '--ci', '--maxWorkers=1', ...(files.length ? files : ['--selectProjects', 'e2e'])],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      TEST_DATABASE_URL: url,
      TEST_PG_ENGINE: 'citus',
      NODE_OPTIONS: [process.env.NODE_OPTIONS, '--experimental-vm-modules'].filter(Boolean).join(' '),
    },
  },
);
process.exit(jest.status ?? 1);
