import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import { CaptureMemoryBudget, weightOf } from './capture-memory-budget.js';

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('CaptureMemoryBudget', () => {
  it('estimates 2 bytes per decoded byte and 64 per value', () => {
    expect(weightOf(1000, 10)).toBe(2640);
  });

  it('lets requests hold memory up to the capacity and frees it on release', async () => {
    const budget = new CaptureMemoryBudget(100);
    const a = budget.open();
    const b = budget.open();
    await a.charge(60);
    await b.chargeUpTo(40);
    expect(budget.inUse).toBe(100);
    await b.chargeUpTo(40); // nothing more
    expect(budget.inUse).toBe(100);
    a.release();
    a.release(); // twice is harmless
    expect(budget.inUse).toBe(40);
    b.release();
    expect(budget.inUse).toBe(0);
  });

  it('answers a younger request 503 with Retry-After when the budget is used up', async () => {
    const budget = new CaptureMemoryBudget(100);
    const old = budget.open();
    await old.charge(80);
    const young = budget.open();
    const error = (await young.charge(30).then(
      () => null,
      (e: unknown) => e,
    )) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.getStatus()).toBe(503);
    expect(error.headers).toEqual({ 'Retry-After': '1' });
    expect(error.body.code).toBe('unavailable');
    young.release();
    expect(budget.inUse).toBe(80);
  });

  it('makes the oldest request wait for the others instead, and refuses newcomers while it waits', async () => {
    const budget = new CaptureMemoryBudget(100);
    const oldest = budget.open();
    await oldest.charge(10);
    const other = budget.open();
    await other.charge(70);
    let done = false;
    const waiting = oldest.charge(50).then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    // While the oldest waits, a newcomer is refused even though 20 bytes are free.
    const newcomer = budget.open();
    await expect(newcomer.charge(10)).rejects.toBeInstanceOf(ApiError);
    newcomer.release();
    other.release();
    await waiting;
    expect(done).toBe(true);
    expect(budget.inUse).toBe(60);
    oldest.release();
    expect(budget.inUse).toBe(0);
  });

  it('answers 413 for a request that could not fit even alone', async () => {
    const budget = new CaptureMemoryBudget(100);
    const r = budget.open();
    await r.charge(90);
    const error = (await r.charge(20).catch((e: unknown) => e)) as ApiError;
    expect(error.getStatus()).toBe(413);
    expect(error.detail).toBe(
      'Request body is too large to decode within CAPTURE_MEMORY_BUDGET (100 bytes).',
    );
  });

  it('gives an abandoned request’s charge back at once: its wait rejects with the reason, later charges too', async () => {
    const budget = new CaptureMemoryBudget(100);
    const oldest = budget.open();
    await oldest.charge(10);
    const other = budget.open();
    await other.charge(70);
    const waiting = oldest.charge(50).catch((e: unknown) => e);
    await settle();
    const timeout = ApiError.timedOut(1500, true);
    // The oldest's deadline fires while it waits: it stops waiting, and what it held is free again.
    oldest.release(timeout);
    expect(await waiting).toBe(timeout);
    expect(budget.inUse).toBe(70);
    await expect(oldest.charge(1)).rejects.toBe(timeout);
    await expect(oldest.chargeUpTo(5)).rejects.toBe(timeout);
    oldest.release(); // the request's own end, later: harmless
    expect(budget.inUse).toBe(70);
    // No waiter is left behind: a newcomer that fits is served.
    const newcomer = budget.open();
    await newcomer.charge(30);
    expect(budget.inUse).toBe(100);
    other.release(ApiError.timedOut(1500, true));
    newcomer.release();
    expect(budget.inUse).toBe(0);
  });

  it('says how long it has been exhausted: from the first refusal or wait until half of it is free again', async () => {
    let now = 1_000;
    const budget = new CaptureMemoryBudget(100, () => now);
    const a = budget.open();
    await a.charge(90);
    expect(budget.exhaustedForMs()).toBe(0);
    const b = budget.open();
    await expect(b.charge(20)).rejects.toBeInstanceOf(ApiError);
    now += 5_000;
    expect(budget.exhaustedForMs()).toBe(5_000);
    // A second refusal does not restart the clock.
    const c = budget.open();
    await expect(c.charge(20)).rejects.toBeInstanceOf(ApiError);
    now += 1_000;
    expect(budget.exhaustedForMs()).toBe(6_000);
    // Refused requests ending, holding nothing, change nothing.
    b.release();
    c.release();
    expect(budget.exhaustedForMs()).toBe(6_000);
    // Half of the budget free again: it is no longer exhausted.
    a.release();
    expect(budget.exhaustedForMs()).toBe(0);
  });

  it('is no longer exhausted once the request that waited is served', async () => {
    let now = 0;
    const budget = new CaptureMemoryBudget(100, () => now);
    const oldest = budget.open();
    await oldest.charge(10);
    const other = budget.open();
    await other.charge(80);
    const waiting = oldest.charge(20);
    now += 100;
    expect(budget.exhaustedForMs()).toBe(100);
    // The other gives 20 back: 60 + 10 + 20 fits, and the waiting request is served.
    await other.chargeUpTo(60);
    await waiting;
    expect(budget.exhaustedForMs()).toBe(0);
  });

  it('is under pressure from half of it in use, or while it refuses', async () => {
    const budget = new CaptureMemoryBudget(100);
    const a = budget.open();
    await a.charge(49);
    expect(budget.underPressure).toBe(false);
    await a.charge(1);
    expect(budget.underPressure).toBe(true);
    await a.chargeUpTo(10);
    expect(budget.underPressure).toBe(false);
    const b = budget.open();
    await expect(b.charge(95)).rejects.toBeInstanceOf(ApiError);
    // Refusing, with 10 in use: under pressure until half of it is free again.
    expect(budget.underPressure).toBe(true);
    b.release();
    a.release();
    expect(budget.underPressure).toBe(false);
  });
});
