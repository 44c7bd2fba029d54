import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';

/**
 * Work every replica repeats on a timer (the batch export scheduler, the recording purge, the orphan sweep):
 *
 * - registered in the SchedulerRegistry at bootstrap under `name`, unless `intervalSeconds()` is 0 or there is
 *   no registry (the CLI);
 * - a tick is skipped while the previous one still runs, so a slow one is never overlapped;
 * - on shutdown no tick starts, and the one in flight finishes before the pool closes.
 *
 * `run` does one tick and must not throw: it logs its own failures (the next tick retries).
 */
export abstract class IntervalTask implements OnApplicationBootstrap, OnModuleDestroy {
  private running: Promise<void> | null = null;
  private shutDown = false;

  protected constructor(
    private readonly name: string,
    private readonly registry: SchedulerRegistry | undefined,
  ) {}

  /** Seconds between ticks; 0 leaves the timer off. */
  protected abstract intervalSeconds(): number;

  /** One tick. */
  protected abstract run(): Promise<void>;

  /** Whether shutdown has begun: long work checks it between steps. */
  protected get stopped(): boolean {
    return this.shutDown;
  }

  onApplicationBootstrap(): void {
    const seconds = this.intervalSeconds();
    if (!seconds || !this.registry) return;
    const handle = setInterval(() => void this.tick(), seconds * 1000);
    this.registry.addInterval(this.name, handle);
  }

  async onModuleDestroy(): Promise<void> {
    this.shutDown = true;
    if (this.registry?.doesExist('interval', this.name)) this.registry.deleteInterval(this.name);
    await this.running;
  }

  /** One tick now, unless one is running (then that one's promise) or shutdown has begun. */
  tick(): Promise<void> {
    if (this.shutDown) return Promise.resolve();
    this.running ??= this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }
}
