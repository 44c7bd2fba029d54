import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../../config/config.js';
import { bool, int, setting } from '../../config/settings.js';
import type { FeatureTask } from '../feature/feature.js';
import { IntervalTask } from './interval-task.js';
import { TaskRunner } from './task-runner.js';

class Counter extends IntervalTask {
  runs = 0;
  on = true;
  /** Set: `run` rejects with it (breaking its contract, as a bug would). */
  fail: Error | null = null;
  release: () => void = () => undefined;

  override enabled(): boolean {
    return this.on;
  }

  protected run(): Promise<void> {
    this.runs++;
    if (this.fail) return Promise.reject(this.fail);
    return new Promise((resolve) => (this.release = resolve));
  }
}

const TABLE = {
  COUNTER_SECONDS: setting(int(0, 3600), 0, 'interval'),
  COUNTER_FLAG: setting(bool, false, 'not a number'),
};

/** A runner over one feature declaring `task`, its handler resolved to `handler` as the module graph would. */
function runnerOf(handler: Counter, env: Record<string, string>, task: Partial<FeatureTask> = {}) {
  const registry = new SchedulerRegistry();
  const declared: FeatureTask = {
    name: 'counter',
    interval: 'COUNTER_SECONDS',
    description: 'counts',
    handler: async () => Counter,
    ...task,
  };
  const moduleRef = {
    get: (type: unknown) => (type === Counter ? handler : undefined),
  } as unknown as ModuleRef;
  const runner = new TaskRunner([{ tasks: [declared] }], moduleRef, registry, AppConfig.fromEnv(env, TABLE));
  return { runner, registry };
}

describe('TaskRunner', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('starts a declared task every interval of its setting, under its name, and stops it on shutdown', async () => {
    jest.useFakeTimers();
    const handler = new Counter();
    const { runner, registry } = runnerOf(handler, { COUNTER_SECONDS: '30' });
    await runner.onApplicationBootstrap();
    expect(registry.getIntervals()).toEqual(['counter']);
    expect(handler.runs).toBe(0);
    jest.advanceTimersByTime(30_000);
    expect(handler.runs).toBe(1);
    // A tick still running when the next is due is not overlapped.
    jest.advanceTimersByTime(30_000);
    expect(handler.runs).toBe(1);
    let stopped = false;
    const stopping = runner.onModuleDestroy().then(() => (stopped = true));
    expect(registry.getIntervals()).toEqual([]);
    await Promise.resolve();
    expect(stopped).toBe(false);
    handler.release();
    await stopping;
    jest.advanceTimersByTime(120_000);
    expect(handler.runs).toBe(1);
  });

  it('starts no timer with the setting at 0 or a handler not enabled in this configuration', async () => {
    const off = runnerOf(new Counter(), { COUNTER_SECONDS: '0' });
    await off.runner.onApplicationBootstrap();
    expect(off.registry.getIntervals()).toEqual([]);
    const disabled = new Counter();
    disabled.on = false;
    const idle = runnerOf(disabled, { COUNTER_SECONDS: '30' });
    await idle.runner.onApplicationBootstrap();
    expect(idle.registry.getIntervals()).toEqual([]);
  });

  it('ticks once at boot when declared atBoot', async () => {
    const handler = new Counter();
    const { runner } = runnerOf(handler, { COUNTER_SECONDS: '3600' }, { atBoot: true });
    await runner.onApplicationBootstrap();
    expect(handler.runs).toBe(1);
    handler.release();
    await runner.onModuleDestroy();
  });

  it('with jitterSeconds waits a random delay within it before the timer starts', async () => {
    jest.useFakeTimers();
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    const handler = new Counter();
    const { runner, registry } = runnerOf(handler, { COUNTER_SECONDS: '60' }, { jitterSeconds: 10 });
    await runner.onApplicationBootstrap();
    expect([registry.getTimeouts(), registry.getIntervals()]).toEqual([['counter'], []]);
    jest.advanceTimersByTime(4_999);
    expect(registry.getIntervals()).toEqual([]);
    jest.advanceTimersByTime(1);
    expect([registry.getTimeouts(), registry.getIntervals()]).toEqual([[], ['counter']]);
    jest.advanceTimersByTime(60_000);
    expect(handler.runs).toBe(1);
    handler.release();
    await runner.onModuleDestroy();
    jest.restoreAllMocks();
  });

  it('refuses a task whose interval setting is not declared or not a number', async () => {
    await expect(
      runnerOf(new Counter(), {}, { interval: 'NO_SUCH' }).runner.onApplicationBootstrap(),
    ).rejects.toThrow('scheduled task counter: its interval setting NO_SUCH is not declared');
    await expect(
      runnerOf(new Counter(), {}, { interval: 'COUNTER_FLAG' }).runner.onApplicationBootstrap(),
    ).rejects.toThrow('scheduled task counter: its interval setting COUNTER_FLAG is not a number');
  });

  it('logs a tick that throws, instead of leaving its rejection unhandled, and ticks again at the next interval', async () => {
    jest.useFakeTimers();
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const handler = new Counter();
    const boom = new Error('boom');
    handler.fail = boom;
    const { runner } = runnerOf(handler, { COUNTER_SECONDS: '30' }, { atBoot: true });
    await runner.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(0);
    expect(handler.runs).toBe(1);
    expect(logged.mock.calls).toEqual([[{ err: boom }, 'Counter tick failed; the next tick retries']]);
    handler.fail = null;
    await jest.advanceTimersByTimeAsync(30_000);
    expect(handler.runs).toBe(2);
    expect(logged).toHaveBeenCalledTimes(1);
    handler.release();
    await runner.onModuleDestroy();
    logged.mockRestore();
  });
});
