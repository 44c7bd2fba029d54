import {
  type DynamicModule,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../../config/config.js';
import type { Feature, FeatureTask } from '../feature/feature.js';
import type { IntervalTask } from './interval-task.js';

/** The features whose declared tasks the runner starts. */
export const TASK_FEATURES = Symbol('TASK_FEATURES');

/** The seconds between two ticks of `task`: the value of its setting (throws when that is no declared number). */
export function taskInterval(task: Pick<FeatureTask, 'name' | 'interval'>, config: AppConfig): number {
  const values = config.values as unknown as Record<string, unknown>;
  if (!(task.interval in values)) {
    throw new Error(`scheduled task ${task.name}: its interval setting ${task.interval} is not declared`);
  }
  const seconds = values[task.interval];
  if (typeof seconds !== 'number') {
    throw new Error(`scheduled task ${task.name}: its interval setting ${task.interval} is not a number`);
  }
  return seconds;
}

/**
 * Starts the scheduled tasks every feature declares in its manifest (`tasks`): at bootstrap, for each task
 * whose interval setting is above 0 and whose handler is `enabled()`, a timer in the SchedulerRegistry under the
 * task's name (after a random delay up to `jitterSeconds`, when declared), plus one tick at boot for `atBoot`.
 * On shutdown the timers are removed and each started task's tick in flight is awaited, before the pool closes.
 * What a tick does, and which replica may do it (advisory locks, statements safe on every replica), is the
 * handler's.
 */
@Injectable()
export class TaskRunner implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly started: IntervalTask[] = [];
  private readonly names: string[] = [];

  constructor(
    @Inject(TASK_FEATURES) private readonly features: readonly Pick<Feature, 'tasks'>[],
    private readonly moduleRef: ModuleRef,
    private readonly registry: SchedulerRegistry,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const task of this.features.flatMap((f) => f.tasks ?? [])) {
      const seconds = taskInterval(task, this.config);
      const handler = this.moduleRef.get(await task.handler(), { strict: false });
      if (!seconds || !handler.enabled()) continue;
      this.started.push(handler);
      this.names.push(task.name);
      const tick = () => void handler.tick();
      const start = () => this.registry.addInterval(task.name, setInterval(tick, seconds * 1000));
      const delay = task.jitterSeconds ? Math.floor(Math.random() * task.jitterSeconds * 1000) : 0;
      if (delay) {
        this.registry.addTimeout(
          task.name,
          setTimeout(() => {
            this.registry.deleteTimeout(task.name);
            start();
          }, delay),
        );
      } else {
        start();
      }
      if (task.atBoot) tick();
    }
  }

  async onModuleDestroy(): Promise<void> {
    for (const name of this.names) {
      if (this.registry.doesExist('timeout', name)) this.registry.deleteTimeout(name);
      if (this.registry.doesExist('interval', name)) this.registry.deleteInterval(name);
    }
    await Promise.all(this.started.map((task) => task.stop()));
  }
}

/** The task runner of the application, over the features it serves. */
@Module({})
export class TaskRunnerModule {
  static forRoot(features: readonly Pick<Feature, 'tasks'>[]): DynamicModule {
    return {
      module: TaskRunnerModule,
      providers: [{ provide: TASK_FEATURES, useValue: features }, TaskRunner],
    };
  }
}
