import { describe, expect, it } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { IntervalTask } from './interval-task.js';

class Counting extends IntervalTask {
  runs = 0;
  release: () => void = () => undefined;

  constructor(
    registry: SchedulerRegistry | undefined,
    private readonly seconds: number,
  ) {
    super('counting', registry);
  }

  protected intervalSeconds(): number {
    return this.seconds;
  }

  protected run(): Promise<void> {
    this.runs++;
    return new Promise((resolve) => (this.release = resolve));
  }

  get isStopped(): boolean {
    return this.stopped;
  }
}

describe('IntervalTask', () => {
  it('registers its timer under its name, and not at all with 0 seconds or without a registry', async () => {
    const registry = new SchedulerRegistry();
    const on = new Counting(registry, 60);
    on.onApplicationBootstrap();
    expect(registry.getIntervals()).toEqual(['counting']);
    await on.onModuleDestroy();
    expect(registry.getIntervals()).toEqual([]);

    const off = new Counting(registry, 0);
    off.onApplicationBootstrap();
    expect(registry.getIntervals()).toEqual([]);
    new Counting(undefined, 60).onApplicationBootstrap();
  });

  it('skips a tick while the previous one runs, and runs again once it is done', async () => {
    const task = new Counting(undefined, 60);
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
    const task = new Counting(undefined, 60);
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
