import { Global, Injectable, Module } from '@nestjs/common';

/** Says why the process should not take traffic now, or null when it may. */
export type ReadinessCheck = () => string | null;

/**
 * What besides the database decides readiness (`GET /readyz`): a feature whose own state can leave the process
 * unable to serve (the capture memory budget stuck exhausted) registers a check here, and readiness fails while
 * any check gives a reason, so Kubernetes takes the replica out of service.
 */
@Injectable()
export class ReadinessChecks {
  private readonly checks: ReadinessCheck[] = [];

  register(check: ReadinessCheck): void {
    this.checks.push(check);
  }

  /** The first reason a check gives, or null when every check passes. */
  failure(): string | null {
    for (const check of this.checks) {
      const reason = check();
      if (reason) return reason;
    }
    return null;
  }
}

/** The readiness checks every module may register with (global). */
@Global()
@Module({ providers: [ReadinessChecks], exports: [ReadinessChecks] })
export class ReadinessChecksModule {}
