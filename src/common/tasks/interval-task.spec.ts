import { describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { IntervalTask } from './interval-task.js';

class Counting extends IntervalTask {
  runs = 0;
  /** Set: `run` rejects with it (breaking its contract, as a bug would). */
  fail: Error | null = null;
  release: () => void = () => undefined;

  protected run(): Promise<void> {
    this.runs++;
    if (this.fail) return Promise.reject(this.fail);
    return new Promise((resolve) => (this.release = resolve));
  }

  get isStopped(): boolean {
    return this.stopped;
  }
}

describe('IntervalTask', () => {
  it('skips a tick while the previous one runs, and runs again once it is done', async () => {
    const task = new Counting();
    const first = task.tick();
    expect(task.tick()).toBe(first);
    expect(task.runs).toBe(1);
    task.release();
    await first;
    const second = task.tick();
    expect(task.runs).toBe(2);
    task.release();
    await second;
  });

  it('on shutdown waits for the tick in flight, and starts none after', async () => {
    const task = new Counting();
    void task.tick();
    let destroyed = false;
    const destroy = task.onModuleDestroy().then(() => (destroyed = true));
    await Promise.resolve();
    expect([destroyed, task.isStopped]).toEqual([false, true]);
    task.release();
    await destroy;
    expect(destroyed).toBe(true);
    await task.tick();
    expect(task.runs).toBe(1);
  });

  it('logs a run that throws and resolves, so no rejection is left unhandled; the next tick runs', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const task = new Counting();
      const boom = new Error('boom');
      task.fail = boom;
      await expect(task.tick()).resolves.toBeUndefined();
      expect(logged.mock.calls).toEqual([[{ err: boom }, 'Counting tick failed; the next tick retries']]);
      task.fail = null;
      const next = task.tick();
      expect(task.runs).toBe(2);
      task.release();
      await next;
      expect(logged).toHaveBeenCalledTimes(1);
    } finally {
      logged.mockRestore();
    }
  });
});
