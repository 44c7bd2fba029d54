import { setImmediate as nextTurn } from 'node:timers/promises';

/** Most milliseconds one slice of work may hold the event loop before `Yielder.tick` gives it back. */
export const SLICE_MS = 5;
/** `step()` reads the clock once per this many steps. */
const STEPS_PER_CHECK = 32;

/**
 * Lets long synchronous work (decoding a large capture body, serialising its events) share the event loop:
 * between small steps call `if (yielder.step()) await yielder.tick()` (or `await yielder.tick()` between larger
 * ones). A slice ends once it has run `sliceMs`; then `tick()` waits one turn of the event loop
 * (`setImmediate`), so health checks, other requests and the shutdown deadline are served in between.
 */
export class Yielder {
  private sliceStart = performance.now();
  private steps = 0;

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Whether the current slice has used its time. */
  get due(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs;
  }

  /** Counts one small step of work; true when the slice has used its time (checked every few steps). */
  step(): boolean {
    return ++this.steps % STEPS_PER_CHECK === 0 && this.due;
  }

  /** Gives the event loop back if the slice has used its time. */
  async tick(): Promise<void> {
    if (!this.due) return;
    await nextTurn();
    this.sliceStart = performance.now();
  }
}
