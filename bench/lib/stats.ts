/** Means of the bench's rounds. */

/** The mean of `values` (0 for none). */
export const mean = (values: readonly number[]): number =>
  values.reduce((a, b) => a + b, 0) / (values.length || 1);

/**
 * `{ [key]: mean }` of an optional figure when every round has it, `{}` when one lacks it (a round read on a
 * machine without `/proc`, or from an older results file): a mean of the rounds that have it would pass for all.
 */
export function meanIfEvery<T, K extends keyof T>(all: readonly T[], key: K): Partial<Record<K, number>> {
  const values = all.map((round) => round[key]);
  if (!values.length || !values.every((v) => typeof v === 'number')) return {};
  return { [key]: mean(values as number[]) } as Partial<Record<K, number>>;
}
