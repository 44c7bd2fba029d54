import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import {
  parseCpuMs,
  processTreeCpuSince,
  readCpuMs,
  readProcessTreeCpu,
  REAPED,
  readSystemCpuMs,
  readV8WorkerCpuMs,
} from './processes.js';

/**
 * Kills the process group of `child` (started `detached`, so it leads its own group): a shell's children go with
 * it instead of outliving the test while they hold its output pipe open.
 */
async function killGroup(child: ChildProcess): Promise<void> {
  const exited = child.exitCode !== null || child.signalCode !== null ? null : once(child, 'exit');
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
  await exited;
  child.stdout?.destroy();
}

/** Starts `command`, waits for its first line of output, and gives the readings of `read` taken then. */
async function whileRunning<T>(command: string, args: string[], read: (pid: number) => T): Promise<T> {
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  try {
    await once(child.stdout!, 'data');
    return read(child.pid!);
  } finally {
    await killGroup(child);
  }
}

describe('readV8WorkerCpuMs: the CPU of V8 worker threads, from /proc', () => {
  it('counts the garbage collector’s workers of a node process that collects a large heap, within its whole CPU', async () => {
    // Keeps about 100 MB of small objects alive while allocating more (concurrent marking on V8's workers), then
    // says so and waits.
    const script = `
      const keep = [];
      const end = Date.now() + 1500;
      while (Date.now() < end) {
        keep.push(Array.from({ length: 1000 }, (_, i) => ({ i, s: 'x' + i })));
        if (keep.length > 1000) keep.splice(0, 250);
      }
      console.log('done');
      setInterval(() => keep.length, 1000);
    `;
    const { v8, all } = await whileRunning(process.execPath, ['-e', script], (pid) => ({
      v8: readV8WorkerCpuMs(pid),
      all: readCpuMs(pid),
    }));
    expect(v8).toBeGreaterThan(0);
    expect(v8).toBeLessThan(all);
  });

  it('is 0 for a process without V8 threads', async () => {
    const v8 = await whileRunning('sh', ['-c', 'echo started; sleep 30'], readV8WorkerCpuMs);
    expect(v8).toBe(0);
  });
});

describe('readProcessTreeCpu, processTreeCpuSince: the CPU of a process and of the processes it started', () => {
  it('counts a child’s CPU with its parent’s, from its start when it started since the first reading', async () => {
    // A shell whose child spins until it has used 600 ms of CPU (whatever else loads the machine), then says so and
    // waits.
    const spinner = `${process.execPath} -e 'while (process.cpuUsage().user < 600000); console.log(1); setTimeout(() => 0, 2000)'`;
    const child: ChildProcess = spawn('sh', ['-c', `sleep 0.3; ${spinner} & wait`], {
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    try {
      const before = readProcessTreeCpu(child.pid!);
      expect(before.has(child.pid!)).toBe(true);
      await once(child.stdout!, 'data');
      const tree = readProcessTreeCpu(child.pid!);
      expect(tree.size).toBeGreaterThanOrEqual(2); // the shell and the spinner
      expect(tree.get(child.pid!)).toBeLessThan(100);
      expect(processTreeCpuSince(child.pid!, before)).toBeGreaterThanOrEqual(400);
    } finally {
      await killGroup(child);
    }
    expect(readProcessTreeCpu(2 ** 22 + 1).size).toBe(0);
  });

  it('counts in full a child that started and ended between two readings (a parallel query worker)', async () => {
    // A shell that starts a child spinning for 500 ms of CPU, reaps it, says so and waits: the child is gone when
    // the second reading is taken, and its time is in the shell's cutime.
    const spinner = `${process.execPath} -e 'while (process.cpuUsage().user < 500000);'`;
    const child: ChildProcess = spawn('sh', ['-c', `sleep 0.3; ${spinner}; echo done; sleep 30`], {
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    try {
      const before = readProcessTreeCpu(child.pid!);
      await once(child.stdout!, 'data');
      const after = readProcessTreeCpu(child.pid!);
      expect(after.get(REAPED)! - (before.get(REAPED) ?? 0)).toBeGreaterThanOrEqual(400);
      expect(processTreeCpuSince(child.pid!, before)).toBeGreaterThanOrEqual(400);
    } finally {
      await killGroup(child);
    }
  });

  it('counts a child that ended since only for what it spent after the first reading', async () => {
    // The spinner already ran 400 ms of user CPU at the first reading, then spins 300 ms more and ends.
    const spinner = `${process.execPath} -e 'while (process.cpuUsage().user < 400000); console.log(1); while (process.cpuUsage().user < 700000);'`;
    const child: ChildProcess = spawn('sh', ['-c', `${spinner}; echo done; sleep 30`], {
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    try {
      const lines: string[] = [];
      child.stdout!.on('data', (chunk: Buffer) => lines.push(...chunk.toString().trim().split('\n')));
      while (!lines.length) await once(child.stdout!, 'data');
      const before = readProcessTreeCpu(child.pid!);
      const spun = [...before.entries()].find(([pid]) => pid !== child.pid && pid !== REAPED)?.[1] ?? 0;
      expect(spun).toBeGreaterThanOrEqual(350);
      while (!lines.includes('done')) await once(child.stdout!, 'data');
      const since = processTreeCpuSince(child.pid!, before);
      // Its whole time (user and the system time of its getrusage calls) went to the shell's cutime when it ended.
      const reaped = readProcessTreeCpu(child.pid!).get(REAPED)! - (before.get(REAPED) ?? 0);
      expect(reaped).toBeGreaterThanOrEqual(spun + 250);
      // The shell and `sleep` spend next to nothing: what is left is the spinner's time after the first reading.
      expect(since).toBeGreaterThanOrEqual(reaped - spun - 20);
      expect(since).toBeLessThanOrEqual(reaped - spun + 20);
    } finally {
      await killGroup(child);
    }
  });

  it('leaves out what a process that ended since had spent', () => {
    const before = new Map([[2 ** 22 + 1, 5_000]]);
    expect(processTreeCpuSince(2 ** 22 + 1, before)).toBe(0);
    // The root gone with its reaped children's total: 0, not minus what it had.
    expect(
      processTreeCpuSince(
        2 ** 22 + 1,
        new Map([
          [2 ** 22 + 1, 5_000],
          [REAPED, 7_000],
          [2 ** 22 + 2, 300],
        ]),
      ),
    ).toBe(0);
  });
});

describe('parseCpuMs and readSystemCpuMs: user and system CPU time, from /proc', () => {
  it('reads utime and stime after the command name, whatever it holds', () => {
    // pid (comm) state ppid … : utime is the 14th field of the line, stime the 15th.
    const stat = '42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 37 5 0 0 20 0 11 0 1000 0 0';
    expect(parseCpuMs(stat)).toEqual({ user: 370, system: 50 });
  });

  it('a process that makes many system calls spends system time, within its whole CPU', async () => {
    // Many small writes to /dev/null: system calls, each the kernel's work.
    const script = `
      const fs = require('fs');
      const fd = fs.openSync('/dev/null', 'w');
      const end = Date.now() + 800;
      while (Date.now() < end) for (let i = 0; i < 1000; i++) fs.writeSync(fd, 'x');
      console.log('done');
      setInterval(() => {}, 1000);
    `;
    const { system, all } = await whileRunning(process.execPath, ['-e', script], (pid) => ({
      system: readSystemCpuMs(pid),
      all: readCpuMs(pid),
    }));
    expect(system).toBeGreaterThan(0);
    expect(system).toBeLessThan(all);
  });
});
