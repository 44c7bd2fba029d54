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
 */
export class CaptureMemoryBudget {
  private used = 0;
  /** Requests holding memory, oldest first (a Set keeps insertion order). */
  private readonly holders = new Set<BudgetReservation>();
  private waiter: { reservation: BudgetReservation; amount: number; resolve: () => void } | null = null;

  constructor(readonly capacity: number) {}

  get inUse(): number {
    return this.used;
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
    await new Promise<void>((resolve) => (this.waiter = { reservation, amount, resolve }));
  }

  /** @internal */
  release(reservation: BudgetReservation): void {
    this.used -= reservation.held;
    reservation.held = 0;
    this.holders.delete(reservation);
    this.wake();
  }

  /** @internal Gives back `amount` of what the reservation holds (it let go of a copy). */
  refund(reservation: BudgetReservation, amount: number): void {
    const given = Math.min(amount, reservation.held);
    if (given <= 0) return;
    this.used -= given;
    reservation.held -= given;
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    if (waiter && this.used + waiter.amount <= this.capacity) {
      this.waiter = null;
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

  constructor(private readonly budget: CaptureMemoryBudget) {}

  /** Holds `amount` more bytes of the budget (waits, or throws 503/413, as the budget says). */
  charge(amount: number): Promise<void> {
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

  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.release(this);
  }
}
