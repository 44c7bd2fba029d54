import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** The built service, as production starts it. */
export const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
/** The built operator CLI. */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** Whether `err` says a server could not bind its port because another process holds it. */
export function isPortTaken(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return /EADDRINUSE|already in use|could not bind/i.test(message);
}

/**
 * Starts a server that cannot bind port 0 and report the port it got (the embedded PostgreSQL; the metrics
 * server, where METRICS_PORT=0 means off; redis-server) on a port picked at random below Linux's ephemeral range
 * (32768 and up, where the system puts port 0 and outgoing connections), and again on another one when `start`
 * fails because that port was taken (isPortTaken) by some other process before the server bound it: a port
 * lost in between costs a retry, never the test. `start` cleans up after its own failure.
 */
export async function onSomePort<T>(start: (port: number) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    try {
      return await start(port);
    } catch (err) {
      if (attempt >= attempts || !isPortTaken(err)) throw err;
    }
  }
}

/**
 * A loopback port where a connection is refused, for "the peer is down": a privileged port (below 1024, which
 * no unprivileged process can bind, so none of the machine's other tests takes it meanwhile) found refusing.
 */
export async function refusedPort(): Promise<number> {
  for (let port = 1; port < 1024; port++) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
  throw new Error('no refusing port below 1024 on loopback');
}

export interface ServiceProcess {
  child: ChildProcess;
  /** The environment it was started with (besides PATH, PORT and HOST). */
  env: Record<string, string>;
  port: number;
  base: string;
  stdout(): string;
  stderr(): string;
  /** The JSON log lines written so far (non-JSON lines, such as the bootstrap key banner, left out). */
  logs(): Record<string, unknown>[];
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/** Preloaded into the service: it reports the ports it listens on (test/support/report-listening.mjs). */
const REPORT_LISTENING = fileURLToPath(new URL('./report-listening.mjs', import.meta.url));

/**
 * Starts `node dist/main.js` with only the given environment on port 0 (the system picks a free port as the
 * service binds it: no other process can take it between a test's choice and the bind), learns the port it got,
 * and waits until it answers.
 */
export async function startService(
  env: Record<string, string>,
  {
    timeoutMs = 20000,
    processGroup = false,
  }: {
    timeoutMs?: number;
    /** In a process group of its own, as a terminal starts it: `process.kill(-pid, 'SIGINT')` is a Ctrl-C. */
    processGroup?: boolean;
  } = {},
): Promise<ServiceProcess> {
  const reportDir = await mkdtemp(join(tmpdir(), 'service-ports-'));
  const reportFile = join(reportDir, 'ports');
  const child = spawn(process.execPath, ['--import', pathToFileURL(REPORT_LISTENING).href, MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      // Batch exports of the tests go to servers on loopback.
      BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: 'true',
      ...env,
      LISTEN_REPORT_FILE: reportFile,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: processGroup,
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  // Listening once /healthz answers on one of the ports it reported (the metrics server may have one too).
  const answers = (port: number) =>
    fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
  let port = 0;
  try {
    while (!port) {
      if (child.exitCode !== null) throw new Error(`service exited ${child.exitCode}: ${err || out}`);
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`service did not start: ${err || out}`);
      }
      const reported = existsSync(reportFile)
        ? readFileSync(reportFile, 'utf8').split('\n').filter(Boolean)
        : [];
      for (const candidate of reported.map(Number)) {
        if (await answers(candidate)) port = candidate;
      }
      if (!port) await sleep(50);
    }
  } finally {
    await rm(reportDir, { recursive: true, force: true });
  }
  // Then the boot lines: the "listening on" line is logged (batched, within LOG_FLUSH_MS) once the process has
  // set up its shutdown handling; at a level above info it is not logged, and a flush interval is waited instead.
  if (['trace', 'debug', 'info', undefined].includes(env.LOG_LEVEL)) {
    while (!out.includes('listening on')) {
      if (child.exitCode !== null) throw new Error(`service exited ${child.exitCode}: ${err || out}`);
      if (Date.now() > deadline) throw new Error(`service logged no "listening on" line: ${err || out}`);
      await sleep(20);
    }
  } else {
    await sleep(250);
  }
  return {
    child,
    env,
    port,
    base: `http://127.0.0.1:${port}`,
    stdout: () => out,
    stderr: () => err,
    logs: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => {
          try {
            return JSON.parse(l) as Record<string, unknown>;
          } catch {
            return {};
          }
        }),
    exited,
  };
}

/** The bootstrap key a service on the embedded database printed on its first start, or null. */
export function printedKey(service: ServiceProcess): string | null {
  return /^\s+(phx_[0-9A-Za-z]{43})$/m.exec(service.stdout())?.[1] ?? null;
}

/**
 * A `*` key of admin@localhost for the service's database: the one it printed (embedded database), else one
 * created as an operator does on an external DATABASE_URL, with the built CLI (synchronously: a test's setup).
 */
export async function bootstrapKey(service: ServiceProcess): Promise<string> {
  const printed = printedKey(service);
  if (printed) return printed;
  if (!service.env.DATABASE_URL) throw new Error(`no bootstrap key in the output:\n${service.stdout()}`);
  // Asynchronously: a synchronous CLI run would block this process's event loop past the service's keep-alive
  // timeout, and the next fetch would reuse a socket the service had closed meanwhile ("other side closed").
  const { stdout } = await execFileAsync(
    process.execPath,
    [CLI, 'keys', 'create', '--email', 'admin@localhost', '--scopes', '*', '--label', 'test'],
    { env: { PATH: process.env.PATH ?? '', DATABASE_URL: service.env.DATABASE_URL }, encoding: 'utf8' },
  ).catch((error: Error & { stderr?: string }) => {
    throw new Error(`${error.message}\n${error.stderr ?? ''}`);
  });
  return stdout.trimEnd().split('\n').pop()!;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 50 ms until it returns true; fails after `timeoutMs` with `what`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  json<T = unknown>(): T;
}

/**
 * One HTTP request on a fresh connection (no agent), so a test sees exactly what the server did with that
 * connection (`connection: close`, or a refused connection as a rejected promise with `code`).
 */
export function rawRequest(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown; raw?: Buffer } = {},
): Promise<RawResponse> {
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}${path}`,
      {
        method: options.method ?? 'GET',
        agent: false,
        headers: {
          ...(body
            ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) }
            : {}),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text,
            json: <T>() => JSON.parse(text) as T,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The resident set size of a process, in bytes (Linux: /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}

/**
 * The scheduler's account of the main thread of process `pid` (Linux's `/proc/<pid>/task/<pid>/schedstat`), in
 * milliseconds since it started: `cpu`, time it ran; `waited`, time it was ready to run but waited for a CPU (over
 * an interval: how long the machine, not the process, held it back). Null where the kernel does not say.
 */
export function mainThreadSchedule(pid: number): { cpu: number; waited: number } | null {
  try {
    const [cpu, waited] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    return Number.isFinite(cpu) && Number.isFinite(waited) ? { cpu: cpu / 1e6, waited: waited / 1e6 } : null;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every few milliseconds until stopped; `max` is the highest seen. */
export function sampleRss(pid: number, everyMs = 5): { stop(): number; readonly max: number } {
  let max = rssBytes(pid);
  const timer = setInterval(() => {
    try {
      max = Math.max(max, rssBytes(pid));
    } catch {
      // The process has ended.
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return max;
    },
    get max() {
      return max;
    },
  };
}

/**
 * The NODE_OPTIONS of the base Kubernetes Deployment (its V8 heap limits), so a test runs the service with the
 * heap it has when deployed.
 */
export function deploymentNodeOptions(): string {
  const manifest = readFileSync(new URL('../../deploy/k8s/base/deployment.yaml', import.meta.url), 'utf8');
  const match = /- name: NODE_OPTIONS\s+value: (.+)/.exec(manifest);
  if (!match) throw new Error('deploy/k8s/base/deployment.yaml sets no NODE_OPTIONS');
  const options = match[1].trim().replace(/^(['"])(.*)\1$/, '$2');
  // The tests below measure what this heap allows; they must not silently measure another.
  if (!options.includes('--max-old-space-size=256')) throw new Error(`unexpected NODE_OPTIONS: ${options}`);
  return options;
}

/**
 * The environment of the worker Deployment's container that sizes its work (deploy/k8s/base/worker-deployment.yaml):
 * its V8 heap limits (NODE_OPTIONS), its malloc arenas and thresholds (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_,
 * MALLOC_TRIM_THRESHOLD_) and BATCH_EXPORT_WORKER_CONCURRENCY, so a test runs workers as deployed.
 */
export function workerDeploymentEnv(): {
  NODE_OPTIONS: string;
  BATCH_EXPORT_WORKER_CONCURRENCY: string;
  MALLOC_ARENA_MAX: string;
  MALLOC_MMAP_THRESHOLD_: string;
  MALLOC_TRIM_THRESHOLD_: string;
} {
  const manifest = readFileSync(
    new URL('../../deploy/k8s/base/worker-deployment.yaml', import.meta.url),
    'utf8',
  );
  const value = (name: string) => {
    const match = new RegExp(`- name: ${name}\\s+value: (.+)`).exec(manifest);
    if (!match) throw new Error(`deploy/k8s/base/worker-deployment.yaml sets no ${name}`);
    return match[1].trim().replace(/^(['"])(.*)\1$/, '$2');
  };
  const options = value('NODE_OPTIONS');
  if (!options.includes('--max-old-space-size=256')) throw new Error(`unexpected NODE_OPTIONS: ${options}`);
  return {
    NODE_OPTIONS: options,
    BATCH_EXPORT_WORKER_CONCURRENCY: value('BATCH_EXPORT_WORKER_CONCURRENCY'),
    MALLOC_ARENA_MAX: value('MALLOC_ARENA_MAX'),
    MALLOC_MMAP_THRESHOLD_: value('MALLOC_MMAP_THRESHOLD_'),
    MALLOC_TRIM_THRESHOLD_: value('MALLOC_TRIM_THRESHOLD_'),
  };
}
