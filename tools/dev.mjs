// Development mode (`npm run start:dev`): compiles src/ into dist/ with TypeScript in watch mode, incrementally
// (only changed files and their dependents are re-emitted; the build state is kept in dist/.tsbuildinfo, so a
// later start is quick too), and restarts `node dist/main.js` after every compile without errors. Logs are
// human-readable (LOG_FORMAT=pretty, unless set otherwise). Without DATABASE_URL, the embedded PostgreSQL is
// started once here and kept across restarts; each restart of the service finds it running and uses it. The
// browser bundles of web/ (the replay pages) are built at start and again, with a restart, when web/ changes.
// Ctrl-C stops the service (gracefully), then the embedded database (which runs in its own process group, so
// the terminal's Ctrl-C does not reach it before the service has closed its connections).
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, watch as watchFiles } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const env = { ...process.env, LOG_FORMAT: process.env.LOG_FORMAT || 'pretty' };
const say = (line) => process.stdout.write(`[dev] ${line}\n`);

let child = null;
let database = null;
let stopping = false;
let restartQueued = false;

/** Files the build copies beside the compiled code (nest-cli.json `assets`). */
function copyAssets() {
  const from = join(root, 'src', 'plugins', 'catalog');
  const to = join(dist, 'plugins', 'catalog');
  mkdirSync(to, { recursive: true });
  for (const file of readdirSync(from).filter((f) => f.endsWith('.json'))) {
    copyFileSync(join(from, file), join(to, file));
  }
}

let webBuilt = false;

/** The replay pages' bundles (tools/build-web.mjs, as `npm run build` makes them). */
function buildWeb() {
  const result = spawnSync(process.execPath, [join(root, 'tools', 'build-web.mjs')], { stdio: 'inherit' });
  if (result.status !== 0) say('building the web bundles failed (see above); the replay pages may not load');
  webBuilt = true;
}

/** The embedded PostgreSQL, started by this process (unless DATABASE_URL is set), so restarts keep it. */
async function startDatabase() {
  if (process.env.DATABASE_URL) return;
  // The manifests register the features' settings, which AppConfig.fromEnv parses with the core ones.
  await import(pathToFileURL(join(dist, 'features.js')).href);
  const { AppConfig } = await import(pathToFileURL(join(dist, 'config', 'config.js')).href);
  const { resolveDatabase } = await import(pathToFileURL(join(dist, 'database', 'resolve-database.js')).href);
  database = await resolveDatabase(AppConfig.fromEnv(env), say);
}

function startService() {
  child = spawn(process.execPath, ['--enable-source-maps', join(dist, 'main.js')], {
    env,
    stdio: 'inherit',
  });
  const current = child;
  current.once('exit', (code, signal) => {
    if (child === current) child = null;
    if (!stopping && !restartQueued)
      say(`service exited (${signal ?? code}); waiting for a change to restart it`);
  });
}

function stopService() {
  const current = child;
  if (!current || current.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => current.kill('SIGKILL'), 15_000);
    current.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    current.kill('SIGTERM');
  });
}

async function restart() {
  if (restartQueued) return;
  restartQueued = true;
  try {
    copyAssets();
    if (!webBuilt) buildWeb();
    if (child) {
      say('change compiled: restarting the service');
      await stopService();
    } else if (!database && !process.env.DATABASE_URL) {
      await startDatabase();
    }
    if (!stopping) startService();
  } catch (err) {
    say(`could not start: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    restartQueued = false;
  }
}

const formatHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => root,
  getNewLine: () => '\n',
};

const host = ts.createWatchCompilerHost(
  join(root, 'tsconfig.build.json'),
  { incremental: true, tsBuildInfoFile: join(dist, '.tsbuildinfo'), preserveWatchOutput: true },
  ts.sys,
  ts.createEmitAndSemanticDiagnosticsBuilderProgram,
  (diagnostic) => process.stdout.write(ts.formatDiagnosticsWithColorAndContext([diagnostic], formatHost)),
  (diagnostic, _newLine, _options, errorCount) => {
    say(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    // "Found N errors. Watching for file changes." ends every compile.
    if (errorCount === 0) void restart();
    else if (errorCount !== undefined) say('not restarting: fix the errors above');
  },
);
const watch = ts.createWatchProgram(host);

let webTimer = null;
const webWatcher = watchFiles(join(root, 'web'), { recursive: true }, () => {
  clearTimeout(webTimer);
  webTimer = setTimeout(() => {
    say('web/ changed: rebuilding the bundles');
    webBuilt = false;
    void restart();
  }, 300);
});

async function shutdown(signal) {
  if (stopping) return;
  stopping = true;
  say(`${signal}: stopping`);
  watch.close();
  webWatcher.close();
  await stopService();
  if (database) await database.stop();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
