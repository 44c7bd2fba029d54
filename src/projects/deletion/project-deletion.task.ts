import { Injectable, Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../../common/errors/database-errors.js';
import { IntervalTask } from '../../common/tasks/interval-task.js';
import { AppConfig } from '../../config/config.js';
import { runOutsideApiRequest } from '../../database/pool-shares.js';
import { afterCommit } from '../../database/transactions.js';
import { ProjectDeletionService } from './project-deletion.service.js';

/**
 * The `project-deletion` task: removes deleted projects' data every PROJECT_DELETION_INTERVAL_SECONDS, at boot
 * (what a stopped process left is resumed), and at once in the process that took a deletion (`kick`). Every
 * replica may run it; one at a time works (ProjectDeletionService's advisory lock).
 */
@Injectable()
export class ProjectDeletionTask extends IntervalTask {
  static readonly INTERVAL_NAME = 'project-deletion';
  private readonly logger = new Logger(ProjectDeletionTask.name);
  /** A deletion came in while a pass ran: that pass goes round once more, so it is not left to the timer. */
  private again = false;

  constructor(
    private readonly deletion: ProjectDeletionService,
    private readonly config: AppConfig,
  ) {
    super();
  }

  /**
   * Starts a pass now, unless the task is off in this process (PROJECT_DELETION_INTERVAL_SECONDS=0): background
   * work, outside the request that asks for it (not on the API's share of the pool, nor under its timeout), once
   * the request's transaction has committed the deletion.
   */
  kick(): void {
    if (!this.config.get('PROJECT_DELETION_INTERVAL_SECONDS')) return;
    this.again = true;
    afterCommit(() => runOutsideApiRequest(() => void this.tick()));
  }

  /** One pass (a tick), repeated while deletions come in during it. */
  protected async run(): Promise<void> {
    do {
      this.again = false;
      try {
        const report = await this.deletion.deletePending(() => !this.stopped);
        if (report?.projects || report?.failed) this.logger.log(report, 'project deletion pass');
      } catch (err) {
        if (isDatabaseUnavailable(err)) {
          this.logger.warn(
            { reason: (err as Error).message },
            'database unavailable: project deletion skipped',
          );
          return;
        }
        this.logger.error({ err }, 'project deletion failed; the next pass retries');
        return;
      }
    } while (this.again && !this.stopped);
  }
}
