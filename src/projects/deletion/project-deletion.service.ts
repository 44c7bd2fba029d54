import { Injectable, Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../../common/errors/database-errors.js';
import { AppConfig } from '../../config/config.js';
import { TransactionHost } from '../../database/transactions.js';
import { ProjectsRepository } from '../projects.repository.js';

/** The advisory lock held while deleted projects' data is removed: one process at a time does it. */
export const PROJECT_DELETION_LOCK = 727_274_010;

/** Where a cleanup runs when it declares no `order`. */
export const DEFAULT_CLEANUP_ORDER = 100;

/**
 * How a feature removes its data of a deleted project. Each feature that keeps rows (or stored objects) of a
 * project registers one (`ProjectDeletionService.register`, from a provider of its module, in `onModuleInit`),
 * so that the projects feature knows none of them and a new feature brings its own.
 */
export interface ProjectDataCleanup {
  /** Its name in the logs and the report (the feature's). */
  name: string;
  /**
   * When it runs among the others, lowest first (default DEFAULT_CLEANUP_ORDER): what works on the project's
   * data stops first (batch exports, 10), data that points at other data goes before it (recordings, 20, before
   * events and persons).
   */
  order?: number;
  /**
   * Runs inside the transaction that marks the project deleted, so it takes effect with it (or not at all):
   * what must stop or disappear at once beyond the project's own routes, which answer 404 from then on — runs
   * in progress, public links. Short: the DELETE request waits for it.
   */
  stop?(projectId: number): Promise<void>;
  /**
   * Removes at most `limit` of the feature's rows of the project, with what they hold elsewhere (stored
   * objects), in a short transaction of its own; how many it removed, 0 once none is left. Called until it
   * answers 0, by whichever process runs the deletion, also after a restart: it must be safe to call again
   * after any failure, at any point.
   */
  deleteBatch(projectId: number, limit: number): Promise<number>;
}

/** What one pass of the deletion task did. */
export interface ProjectDeletionReport {
  /** Deleted projects whose data and row are now gone. */
  projects: number;
  /** Rows (or objects) removed, by cleanup name. */
  removed: Record<string, number>;
  /** Deleted projects whose removal failed in this pass (retried by the next one). */
  failed: number;
}

/**
 * Deleting a project: `markDeleted` hides it at once (every read of ProjectsRepository leaves it out, so each
 * route under it answers 404 and capture refuses its token), and runs the features' `stop` in the same
 * transaction; `deletePending` (the `project-deletion` task, started at once by the deletion) then runs every
 * registered cleanup of each deleted project until nothing of it is left, and deletes the project's row, whose
 * foreign keys take whatever no feature removed itself. The row keeps `deleted_at` until then, so a pass
 * interrupted at any point (a restart, a crash, a failing store) is resumed by the next one, in any process.
 */
@Injectable()
export class ProjectDeletionService {
  private readonly logger = new Logger(ProjectDeletionService.name);
  private readonly cleanups: ProjectDataCleanup[] = [];
  private readonly batchSize: number;

  constructor(
    private readonly projects: ProjectsRepository,
    private readonly transactions: TransactionHost,
    config: AppConfig,
  ) {
    this.batchSize = config.get('PROJECT_DELETION_BATCH_SIZE');
  }

  /** Adds a feature's cleanup (its name must be new). */
  register(cleanup: ProjectDataCleanup): void {
    if (this.cleanups.some((c) => c.name === cleanup.name)) {
      throw new Error(`a project data cleanup named '${cleanup.name}' is already registered`);
    }
    this.cleanups.push(cleanup);
    this.cleanups.sort(
      (a, b) =>
        (a.order ?? DEFAULT_CLEANUP_ORDER) - (b.order ?? DEFAULT_CLEANUP_ORDER) || (a.name < b.name ? -1 : 1),
    );
  }

  /** The names of the registered cleanups, in the order they run. */
  registered(): string[] {
    return this.cleanups.map((c) => c.name);
  }

  /**
   * Marks the project deleted and runs the cleanups' `stop`, in one transaction (the caller's, when it runs in
   * one). Its capture token (for the token cache to forget), or null when there is no such project or it was
   * already deleted.
   */
  markDeleted(projectId: number): Promise<string | null> {
    return this.transactions.withTransaction(async () => {
      const token = await this.projects.markDeleted(projectId);
      if (token === null) return null;
      for (const cleanup of this.cleanups) await cleanup.stop?.(projectId);
      return token;
    });
  }

  /**
   * Removes the data of every deleted project, the longest waiting first, while `keepGoing` says so (it is asked
   * between batches). One process at a time (an advisory lock): null when another holds it. Without a deleted
   * project, one indexed query and no lock. A project whose removal fails is left for the next pass (logged);
   * the database unavailable ends the pass (thrown).
   */
  async deletePending(keepGoing: () => boolean = () => true): Promise<ProjectDeletionReport | null> {
    const report: ProjectDeletionReport = { projects: 0, removed: {}, failed: 0 };
    if (!(await this.projects.hasPendingDeletion())) return report;
    return this.transactions.tryAdvisoryLock(PROJECT_DELETION_LOCK, async () => {
      const failed: number[] = [];
      for (;;) {
        const id = await this.projects.nextPendingDeletion(failed);
        if (id === null) return report;
        try {
          if (!(await this.removeData(id, report, keepGoing))) return report;
          report.projects++;
        } catch (err) {
          if (isDatabaseUnavailable(err)) throw err;
          failed.push(id);
          report.failed++;
          this.logger.error(
            { err, projectId: id },
            'removing a deleted project failed; the next pass retries',
          );
        }
        if (!keepGoing()) return report;
      }
    });
  }

  /** Runs every cleanup of the project to the end, then deletes its row; false when told to stop on the way. */
  private async removeData(
    projectId: number,
    report: ProjectDeletionReport,
    keepGoing: () => boolean,
  ): Promise<boolean> {
    for (const cleanup of this.cleanups) {
      for (;;) {
        const removed = await cleanup.deleteBatch(projectId, this.batchSize);
        report.removed[cleanup.name] = (report.removed[cleanup.name] ?? 0) + removed;
        if (removed === 0) break;
        if (!keepGoing()) return false;
      }
    }
    await this.projects.removeDeleted(projectId);
    this.logger.log({ projectId }, 'deleted project removed');
    return true;
  }
}
