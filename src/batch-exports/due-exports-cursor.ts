/** Counts of one scheduler transaction (or of a whole tick). */
export interface TickCounts {
  created: number;
  exports: number;
}

const FIRST_KEY = '00000000-0000-0000-0000-000000000000';

/**
 * The keyset cursor of one scheduler tick over the due exports (LOCK_DUE_EXPORTS_SQL), shared by the tick's
 * connections. Each transaction locks the next exports after the last one locked, one lock statement at a time
 * (`next`): the exports are read in id order, each once per tick, whatever the number of connections; what a
 * transaction does after its lock (creating the runs, queueing their dispatch, committing) runs beside the other
 * connections' transactions (`drain`). A transaction locks rows of its own key range only, in key order, so the
 * connections of one tick never wait for each other's rows (on Citus a lock statement waits for the transaction
 * before it to commit: a row lock of a reference table locks its whole shard, docs/citus.md).
 */
export class DueExportsCursor {
  private after = FIRST_KEY;
  private done = false;
  /** The previous lock statement: the next one starts when it has returned. */
  private turn: Promise<unknown> = Promise.resolve();
  /** `drain` waiting for a full lock to start one more connection. */
  private waiting: Array<() => void> = [];

  /** `limit`: the exports one lock statement takes at most; fewer means none is left after them. */
  constructor(private readonly limit: number) {}

  /**
   * Runs `lock(after)` (the next `limit` due exports after key `after`) once the previous lock statement has
   * returned, and moves the cursor past what it locked; null when an earlier lock found the last exports (the
   * caller's transaction then has nothing to do). A lock that fails ends the cursor.
   */
  next<R extends { id: string }>(lock: (after: string) => Promise<R[]>): Promise<R[] | null> {
    const locked = this.turn.then(async () => {
      if (this.done) return null;
      const rows = await lock(this.after);
      if (rows.length) this.after = rows[rows.length - 1].id;
      if (rows.length < this.limit) this.done = true;
      else this.waiting.splice(0).forEach((wake) => wake());
      return rows;
    });
    this.turn = locked.catch(() => {
      this.done = true;
    });
    return locked;
  }

  /**
   * Runs `transaction` (which calls `next` once) again and again until the exports are exhausted, on up to
   * `connections` at once: the first alone, one more each time a lock takes a full `limit` (a tick with few due
   * exports uses one connection and sends what a single one would). The counts are summed; when a transaction
   * fails the others finish the one they are in, and the first failure is thrown.
   */
  async drain(connections: number, transaction: () => Promise<TickCounts>): Promise<TickCounts> {
    const total: TickCounts = { created: 0, exports: 0 };
    const loop = async () => {
      try {
        while (!this.done) {
          const counts = await transaction();
          total.created += counts.created;
          total.exports += counts.exports;
        }
      } catch (err) {
        this.done = true;
        throw err;
      }
    };
    // Started from here, outside the transactions' context: a loop started inside one would join its transaction.
    const loops = [loop()];
    while (loops.length < connections && !this.done) {
      const full = new Promise<boolean>((wake) => this.waiting.push(() => wake(true)));
      const ended = Promise.allSettled(loops).then(() => false);
      if (!(await Promise.race([full, ended])) || this.done) break;
      loops.push(loop());
    }
    this.waiting = [];
    const failed = (await Promise.allSettled(loops)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return total;
  }
}
