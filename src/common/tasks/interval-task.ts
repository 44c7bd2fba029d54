import { Logger, type OnModuleDestroy } from '@nestjs/common';

/**
 * Work every replica repeats on a timer (the batch export scheduler, the recording purge, the orphan sweep): the
 * handler of a scheduled task a feature declares in its manifest (`tasks`). The TaskRunner (./task-runner.ts)
 * starts its timer; the handler holds what a tick is:
 *
 * - a tick is skipped while the previous one still runs, so a slow one is never overlapped;
 * - on shutdown no tick starts, and the one in flight finishes before the pool closes.
 *
 * `run` does one tick and logs its own failures (the next tick retries). One that throws anyway (a bug) is logged
 * by `tick`, which never rejects: a rejection left unhandled would end the process.
 */
export abstract class IntervalTask implements OnModuleDestroy {
  private running: Promise<void> | null = null;
  private shutDown = false;
  private readonly failures = new Logger(this.constructor.name);

  /**
   * Whether the task applies in this configuration (besides its interval setting being above 0), e.g. only
   * with an object store: when false the runner starts no timer.
   */
  enabled(): boolean {
    return true;
  }

  /** One tick. */
  protected abstract run(): Promise<void>;

  /** Whether shutdown has begun: long work checks it between steps. */
  protected get stopped(): boolean {
    return this.shutDown;
  }

  /** No tick starts any more; resolves once the one in flight (if any) has finished. */
  async stop(): Promise<void> {
    this.shutDown = true;
    await this.running;
  }

  onModuleDestroy(): Promise<void> {
    return this.stop();
  }

  /**
   * One tick now, unless one is running (then that one's promise) or shutdown has begun. Never rejects: a `run`
   * that throws is logged, and the next tick runs as usual.
   */
  tick(): Promise<void> {
    if (this.shutDown) return Promise.resolve();
    this.running ??= this.run()
      .catch((err: unknown) => {
        this.failures.error({ err }, `${this.constructor.name} tick failed; the next tick retries`);
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }
}
