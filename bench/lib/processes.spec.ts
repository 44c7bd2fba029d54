import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import { readCpuMs, readProcessTreeCpuMs, readV8WorkerCpuMs } from './processes.js';

/** Starts `command`, waits for its first line of output, and gives the readings of `read` taken then. */
async function whileRunning<T>(command: string, args: string[], read: (pid: number) => T): Promise<T> {
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await once(child.stdout!, 'data');
    return read(child.pid!);
  } finally {
    child.kill('SIGKILL');
    await once(child, 'exit');
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

describe('readProcessTreeCpuMs: the CPU of a process and of the processes it started', () => {
  it('counts a child’s CPU with its parent’s, and leaves another process out', async () => {
    // A shell whose child spins for about 600 ms of CPU, then says so and waits.
    const spinner = `${process.execPath} -e 'const end = Date.now() + 600; while (Date.now() < end); console.log(1); setTimeout(() => 0, 2000)'`;
    const { tree, own } = await whileRunning('sh', ['-c', `${spinner} & wait`], (pid) => ({
      tree: readProcessTreeCpuMs(pid),
      own: readCpuMs(pid),
    }));
    expect(own).toBeLessThan(100);
    expect(tree).toBeGreaterThanOrEqual(400);
    expect(readProcessTreeCpuMs(2 ** 22 + 1)).toBe(0);
  });
});
