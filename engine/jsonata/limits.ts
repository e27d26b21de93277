/**
 * What one state's JSONata may cost. A definition is user input (POSTed over REST),
 * so no expression may hang or exhaust a worker: `($f := function(){$f()}; $f())`,
 * `[1..1e9]`, string doubling, deep recursion all end in States.QueryEvaluationError.
 *
 * The budget counts evaluation steps instead of milliseconds: a wall-clock limit
 * would make step() depend on machine speed, and replaying the same events could
 * then fail where the original run succeeded. At ~500-700 steps per millisecond
 * (measured on the vendored evaluator), the default budget bounds a state's
 * expressions to about a second of CPU, and still lets an expression do a few
 * operations on every element of the largest input AWS allows (256 KiB). Regular
 * expressions run in linear time (regex.ts) and each search is charged one step per
 * 16 characters it may read.
 */
export interface JsonataLimits {
  /** Evaluation steps for all the expressions of one state in one step() (jsonata D1012). */
  maxSteps: number;
  /** Nesting of evaluation (jsonata D1011); about 4-5 levels per user-function recursion. */
  maxDepth: number;
  /** Elements of any sequence, array or range built during evaluation (jsonata D2015). */
  maxSequenceLength: number;
  /** Characters of any string built during evaluation. */
  maxStringLength: number;
}

export const DEFAULT_JSONATA_LIMITS: Readonly<JsonataLimits> = Object.freeze({
  maxSteps: 500_000,
  maxDepth: 1_000,
  maxSequenceLength: 100_000,
  maxStringLength: 1 << 20,
});

let current: Readonly<JsonataLimits> = DEFAULT_JSONATA_LIMITS;
const listeners: Array<() => void> = [];

export function jsonataLimits(): Readonly<JsonataLimits> {
  return current;
}

/**
 * Changes the limits for this process (a driver calls it at startup). Compiled
 * expressions carry their limits, so the compile cache is emptied.
 */
export function configureJsonataLimits(limits: Partial<JsonataLimits>): void {
  current = Object.freeze({ ...current, ...limits });
  for (const listener of listeners) listener();
}

/** Called when the limits change (the compile cache registers here). */
export function onJsonataLimitsChange(listener: () => void): void {
  listeners.push(listener);
}
