import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Server {
  name: string;
  url: string;
  pid: number;
  /** Resident set size in MB (VmRSS of /proc/<pid>/status). */
  rssMb(): number;
  /** CPU time used so far (user + system), ms. */
  cpuMs(): number;
  /** The part of `cpuMs` spent in the kernel (system calls: socket reads and writes, the file writes of the log), ms. */
  systemCpuMs(): number;
  /** The part of `cpuMs` spent by V8's worker threads (concurrent marking and sweeping, compilation), ms. */
  v8WorkerCpuMs(): number;
  stop(): Promise<void>;
}

/** The VmRSS of a process in MB, from /proc (Linux). */
export function readRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) / 1024;
}

/** User and system CPU time of a process in ms, from the text of its /proc/<pid>/stat (clock ticks of 10 ms). */
export function parseCpuMs(stat: string): { user: number; system: number } {
  // Fields after the command name (which may hold spaces) start at ") ": utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

/** CPU time (user + system) of a process in ms, from /proc/<pid>/stat (clock ticks of 10 ms). */
export function readCpuMs(pid: number | string): number {
  const { user, system } = parseCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return user + system;
}

/** System CPU time of a process in ms (the kernel's work for it: system calls), from /proc/<pid>/stat. */
export function readSystemCpuMs(pid: number | string): number {
  return parseCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8')).system;
}

/**
 * CPU time (user + system) of a process's V8 worker threads in ms: the threads whose name starts with `V8`
 * (Node 24, the project's, names them `V8Worker`; Node 20 named every thread `node`, and this was 0 there), which
 * run the garbage collector's concurrent and parallel work and the optimising compiler. A thread that ends between two readings takes its time with it (V8's workers live as long as the
 * process).
 */
export function readV8WorkerCpuMs(pid: number): number {
  let ms = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').startsWith('V8')) {
        ms += readCpuMs(`${pid}/task/${tid}`);
      }
    } catch {
      // The thread ended meanwhile.
    }
  }
  return ms;
}

/** The key under which readProcessTreeCpu keeps the CPU time of the root's children that have ended. */
export const REAPED = -1;

/**
 * CPU time (user + system) in ms of the process `rootPid` and of each process it started, by pid: a PostgreSQL
 * server's postmaster with its backends, background writer, WAL writer, autovacuum and parallel workers. Under
 * REAPED, what the root's children that have ended spent in all (the root's cutime + cstime: the kernel adds a
 * child's time there when the root reaps it).
 */
export function readProcessTreeCpu(rootPid: number): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[1] is the parent's pid; utime and stime as in readCpuMs; cutime and cstime follow them.
      if (Number(entry) === rootPid || Number(fields[1]) === rootPid) {
        cpu.set(Number(entry), (Number(fields[11]) + Number(fields[12])) * 10);
      }
      if (Number(entry) === rootPid) cpu.set(REAPED, (Number(fields[13]) + Number(fields[14])) * 10);
    } catch {
      // The process ended meanwhile.
    }
  }
  return cpu;
}

/**
 * The CPU time in ms the tree of `rootPid` spent since the reading `before` (of readProcessTreeCpu): each living
 * process's time since then (a process started since counts from its start), plus what the children that ended
 * since spent after `before` (their whole time, which the root's REAPED total gained, less what `before` had of
 * them). A short-lived child (a parallel query's worker, a backend whose connection closed) is counted in full.
 */
export function processTreeCpuSince(rootPid: number, before: ReadonlyMap<number, number>): number {
  const now = readProcessTreeCpu(rootPid);
  let ms = (now.get(REAPED) ?? 0) - (before.get(REAPED) ?? 0);
  for (const [pid, cpu] of now) if (pid !== REAPED) ms += cpu - (before.get(pid) ?? 0);
  for (const [pid, cpu] of before) if (pid !== REAPED && pid !== rootPid && !now.has(pid)) ms -= cpu;
  // The root itself gone (its reaped total with it): nothing can be measured since, not less than nothing.
  return now.has(rootPid) ? ms : 0;
}

/**
 * Starts `node <script>` with the given environment, its output appended to `logFile`, and waits until
 * `readyPath` answers 200. The child is stopped with SIGTERM (then SIGKILL after 10 s).
 */
export async function startServer(options: {
  name: string;
  script: string;
  port: number;
  env: Record<string, string>;
  logFile: string;
  readyPath: string;
  cwd: string;
  /** Extra node flags (e.g. `--cpu-prof`). */
  nodeArgs?: readonly string[];
}): Promise<Server> {
  const out = openSync(options.logFile, 'a');
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', out, out],
  });
  let exited: string | null = null;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = `exited with ${signal ?? code}`;
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`${options.name} ${exited} before it was ready; see ${options.logFile}`);
    try {
      const res = await fetch(`${url}${options.readyPath}`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.name} not ready after 60 s; see ${options.logFile}`);
    }
    await sleep(200);
  }
  const pid = child.pid!;
  return {
    name: options.name,
    url,
    pid,
    rssMb: () => readRssMb(pid),
    cpuMs: () => readCpuMs(pid),
    systemCpuMs: () => readSystemCpuMs(pid),
    v8WorkerCpuMs: () => readV8WorkerCpuMs(pid),
    stop: async () => {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** Samples a process's RSS every `everyMs` until stopped; returns the largest value seen. */
export function sampleRss(server: Server, everyMs = 250): { stop(): number } {
  let max = server.rssMb();
  const timer = setInterval(() => {
    try {
      max = Math.max(max, server.rssMb());
    } catch {
      // the process is gone; the caller will notice
    }
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return max;
    },
  };
}
