import type { Request } from 'express';
import { ApiError } from '../errors/api-error.js';

/**
 * The REQUEST_TIMEOUT_MS of one request, shared by the code answering it and the work it started, so that
 * nothing commits after the client was answered with the timeout: work that is about to commit claims the
 * commit (`claimCommit`), which fails once the deadline has passed; a deadline that passes while a commit is
 * under way does not answer the request (`expire` says so), the commit's outcome does.
 */
export class RequestDeadline {
  private state: 'open' | 'passed' | 'committing' = 'open';
  private readonly abandon = new AbortController();
  private readonly startedAt = performance.now();
  private workSettled = false;

  constructor(readonly timeoutMs: number) {}

  /**
   * Aborted once the request is abandoned: answered with the timeout, or its connection closed (the client gone,
   * or the answer sent). Work holding shared resources for the request (the capture memory budget) gives them
   * back then, whatever it is waiting for; the reason is the timeout error, or `closed()`'s.
   */
  get signal(): AbortSignal {
    return this.abandon.signal;
  }

  /**
   * The request's connection closed: its work is abandoned (`signal`), unless it already was or had ended
   * (`settled`: nothing is left to abandon, so the answered request of every capture makes no error for it).
   */
  closed(): void {
    if (!this.workSettled && !this.abandon.signal.aborted) {
      this.abandon.abort(
        ApiError.validation('The request was closed before it was answered.', null, 'invalid_input'),
      );
    }
  }

  /** The work answering the request has ended (resolved or thrown): it holds nothing a close could give back. */
  settled(): void {
    this.workSettled = true;
  }

  /** Milliseconds left before the deadline (0 once it is reached): the longest the work may still wait. */
  remainingMs(): number {
    return Math.max(0, Math.floor(this.timeoutMs - (performance.now() - this.startedAt)));
  }

  /** Whether the request was (or is being) answered with the timeout. */
  get passed(): boolean {
    return this.state === 'passed';
  }

  /** The timeout has run out: true when the request may now be answered 503 `timeout`, false while committing. */
  expire(): boolean {
    if (this.state === 'committing') return false;
    this.state = 'passed';
    if (!this.abandon.signal.aborted) this.abandon.abort(ApiError.timedOut(this.timeoutMs, true));
    return true;
  }

  /**
   * Throws the timeout error once the deadline has passed, or the abandonment's reason once the request was
   * abandoned (its connection closed) before its commit: work in progress stops at its next step, so work whose
   * budget charge was given back does not go on holding its memory.
   */
  throwIfPassed(): void {
    if (this.state === 'passed') throw ApiError.timedOut(this.timeoutMs, true);
    if (this.state === 'open' && this.abandon.signal.aborted) throw this.abandon.signal.reason as Error;
  }

  /** Claims the commit of the request's work: throws (the work rolls back) when the deadline has passed. */
  claimCommit(): void {
    this.throwIfPassed();
    this.state = 'committing';
  }

  /** The commit failed: the request is open again (answered by the error, or the timeout). */
  commitFailed(): void {
    if (this.state === 'committing') this.state = 'open';
  }
}

const deadlines = new WeakMap<Request, RequestDeadline>();

/** Gives `req` its deadline (the direct route middleware does, for REQUEST_TIMEOUT_MS). */
export function setDeadline(req: Request, deadline: RequestDeadline): void {
  deadlines.set(req, deadline);
}

/** The deadline of `req`, or null when it has none. */
export function deadlineOf(req: Request): RequestDeadline | null {
  return deadlines.get(req) ?? null;
}
