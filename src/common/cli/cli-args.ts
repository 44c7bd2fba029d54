import type { CliValues } from '../feature/feature.js';

/** A usage or input error of a CLI command: one line on stderr, exit code 2. */
export class CliUsageError extends Error {}

/** The trimmed value of a required string option; a usage error when it is missing or blank. */
export function required(values: CliValues, name: string, command: string): string {
  const v = values[name];
  if (typeof v !== 'string' || !v.trim()) throw new CliUsageError(`${command}: --${name} is required`);
  return v.trim();
}

/** A comma list option, trimmed, empty items dropped; undefined when the option is absent. */
export function splitList(value: string | boolean | undefined): string[] | undefined {
  return typeof value !== 'string'
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

/** An integer option between 1 and `max`; undefined when absent. */
export function positiveInt(
  values: CliValues,
  name: string,
  command: string,
  max: number,
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > max) {
    throw new CliUsageError(`${command}: --${name} must be an integer between 1 and ${max}`);
  }
  return Number(raw);
}

/** `n word` or `n words`. */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
