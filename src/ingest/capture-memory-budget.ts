import { ApiError } from '../common/errors/api-error.js';

/** Estimated heap of a decoded body: its bytes twice (the parsed strings, then their serialised copies). */
export const BYTE_WEIGHT = 2;
/** Estimated heap of one parsed JSON value (an empty object costs about 60 bytes in V8). */
export const VALUE_WEIGHT = 64;

/** The estimated memory of a body of `bytes` decoded bytes holding `values` JSON values. */
export const weightOf = (bytes: number, values: number) => BYTE_WEIGHT * bytes + VALUE_WEIGHT * values;

/**
 * The memory the capture requests of this process may hold at once (CAPTURE_MEMORY_BUDGET), as estimated from
 * what they decoded so far (`weightOf`). Each request charges its estimate as it parses and releases it when it
 * ends. When the budget is used up, the oldest request waits for the others to finish, and any other request
 * is answered 503 `unavailable` with `Retry-After` (the SDK retries it later), so requests never wait on each
 * other in a circle and the process never holds more than the budget, however many clients send at once. A
 * request that could not fit even alone is answered 413.
 *
 * A reservation is released when its request ends, and also as soon as its request is abandoned (its
 * REQUEST_TIMEOUT_MS fired or its connection closed: `BudgetReservation.release(reason)`), whatever its decoder
 * is waiting for then; a waiting request abandoned so stops waiting (its wait rejects with the reason), and a
 * released reservation is charged nothing more. So no request holds the budget past its deadline.
 */
export class CaptureMemoryBudget {
  private used = 0;
  /** Requests holding memory, oldest first (a Set keeps insertion order). */
  private readonly holders = new Set<BudgetReservation>();
  private waiter: {
    reservation: BudgetReservation;
    amount: number;
    resolve: () => void;
    reject: (reason: unknown) => void;
  } | null = null;
  /**
   * Since when (epoch ms) the budget has been exhausted: requests refused or kept waiting, and since then neither
   * the waiting request served nor half of the budget free again; or null.
   */
  private exhaustedAt: number | null = null;

  constructor(
    readonly capacity: number,
    private readonly now: () => number = Date.now,
  ) {}

  get inUse(): number {
    return this.used;
  }

  /**
   * Whether memory is short: half of the budget or more in use, or requests being refused or kept waiting.
   * A request refused then is answered at once and its connection closed, the rest of its body not read.
   */
  get underPressure(): boolean {
    return this.exhaustedAt !== null || this.used >= this.capacity / 2;
  }

  /**
   * How long (ms) the budget has been exhausted: from a request refused (503) or kept waiting for it, until the
   * waiting request is served or half of the budget is free again. 0 when it is not. Every request gives its
   * charge back by its deadline, so a budget exhausted for much longer than a request may last is stuck
   * (readiness fails on it).
   */
  exhaustedForMs(): number {
    return this.exhaustedAt === null ? 0 : Math.max(0, this.now() - this.exhaustedAt);
  }

  /** A reservation for one request; release it when the request ends. */
  open(): BudgetReservation {
    return new BudgetReservation(this);
  }

  /** @internal */
  async charge(reservation: BudgetReservation, amount: number): Promise<void> {
    if (amount <= 0) return;
    if (reservation.held + amount > this.capacity) {
      throw new ApiError(
        413,
        'payload_too_large',
        `Request body is too large to decode within CAPTURE_MEMORY_BUDGET (${this.capacity} bytes).`,
      );
    }
    this.holders.add(reservation);
    const oldest = this.holders.values().next().value === reservation;
    if (this.used + amount <= this.capacity && (!this.waiter || oldest)) {
      this.take(reservation, amount);
      return;
    }
    this.exhaustedAt ??= this.now();
    if (!oldest) {
      throw new ApiError(
        503,
        'unavailable',
        'The server is busy decoding other recordings. Retry after 1 second.',
        null,
        'server_error',
        { 'Retry-After': '1' },
      );
    }
    await new Promise<void>((resolve, reject) => (this.waiter = { reservation, amount, resolve, reject }));
  }

  /** @internal `reason`: the request was abandoned; its wait, if it waits, rejects with it. */
  release(reservation: BudgetReservation, reason?: unknown): void {
    this.used -= reservation.held;
    reservation.held = 0;
    this.holders.delete(reservation);
    this.easeOff();
    const waiter = this.waiter;
    if (waiter?.reservation === reservation) {
      this.waiter = null;
      waiter.reject(reason ?? new Error('The request ended while it waited for the capture memory budget.'));
    }
    this.wake();
  }

  /** @internal Gives back `amount` of what the reservation holds (it let go of a copy). */
  refund(reservation: BudgetReservation, amount: number): void {
    const given = Math.min(amount, reservation.held);
    if (given <= 0) return;
    this.used -= given;
    reservation.held -= given;
    this.easeOff();
    this.wake();
  }

  /** The budget is no longer exhausted once half of it is free again. */
  private easeOff(): void {
    if (this.used <= this.capacity / 2) this.exhaustedAt = null;
  }

  private wake(): void {
    const waiter = this.waiter;
    if (waiter && this.used + waiter.amount <= this.capacity) {
      this.waiter = null;
      // The request that waited goes on: memory is moving again.
      this.exhaustedAt = null;
      this.take(waiter.reservation, waiter.amount);
      waiter.resolve();
    }
  }

  private take(reservation: BudgetReservation, amount: number): void {
    this.used += amount;
    reservation.held += amount;
  }
}

export class BudgetReservation {
  held = 0;
  private released = false;
  /** Set when the request was abandoned (deadline, closed connection): why, thrown by any later charge. */
  abandoned: { reason: unknown } | null = null;

  constructor(private readonly budget: CaptureMemoryBudget) {}

  /** Holds `amount` more bytes of the budget (waits, or throws 503/413, as the budget says). */
  charge(amount: number): Promise<void> {
    // A released reservation holds nothing more (its request has ended or was abandoned).
    if (this.released && amount > 0) {
      return Promise.reject(
        this.abandoned?.reason ?? new Error('The capture memory reservation was released.'),
      );
    }
    return this.budget.charge(this, amount);
  }

  /**
   * Brings the held amount to `total` (the request's estimate so far): charges what is missing, gives back
   * what is over.
   */
  chargeUpTo(total: number): Promise<void> {
    if (total < this.held) {
      if (!this.released) this.budget.refund(this, this.held - total);
      return Promise.resolve();
    }
    return this.charge(total - this.held);
  }

  /**
   * Gives back all the reservation holds. With `reason` (the request was abandoned: its deadline fired or its
   * connection closed), any wait for the budget rejects with it, and so does any later charge.
   */
  release(reason?: unknown): void {
    if (reason !== undefined && !this.abandoned) this.abandoned = { reason };
    if (this.released) return;
    this.released = true;
    this.budget.release(this, reason);
  }
}
