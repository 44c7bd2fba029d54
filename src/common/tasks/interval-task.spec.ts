import { describe, expect, it } from '@jest/globals';
import { IntervalTask } from './interval-task.js';

class Counting extends IntervalTask {
  runs = 0;
  release: () => void = () => undefined;

  protected run(): Promise<void> {
    this.runs++;
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
});
