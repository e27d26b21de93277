/**
 * How much expression work a step may do on the thread that called it.
 *
 * A state's expressions run under budgets that count work (jsonata steps, JSONPath
 * visits), not time, so that a replayed step always ends as the original did. The
 * largest budget allowed is about a second of CPU, and in `stepwise serve` the
 * thread that evaluates is also the one that answers `/health` and every request.
 * So a process that serves (runtime/offload/) sets a much smaller slice here: a step
 * whose expressions pass it stops with `SliceExceeded`, and the driver runs the same
 * step again on an evaluation thread, where only the budgets apply. The result does
 * not depend on where the step ran: the budgets are the same there, and the step is
 * pure. Unset (the CLI, tests, the evaluation thread itself), nothing changes.
 */
export interface StepSlice {
  /** Jsonata evaluation steps (the unit of `JsonataLimits.maxSteps`) per meter. */
  jsonataSteps: number;
  /** Nodes one JSONPath evaluation visits (the unit of `PathLimits.maxVisits`). */
  pathVisits: number;
  /**
   * Characters of JSON in one JSONPath result. A deep scan's matches share subtrees, so
   * a result of megabytes of JSON costs few visits and then 300 ms to serialize.
   */
  pathResultChars: number;
  /**
   * Characters the regular expression searches of one meter may read. Apart from the
   * steps they are charged: a search is one call no meter interrupts, and the first
   * searches of a pattern run in code the JIT has not compiled yet (10 times slower:
   * 200 ms for 5,000 characters cold), so long texts are searched on the thread.
   */
  regexChars: number;
}

/** A step did more than the caller's slice: run it again where it may take its whole budget. */
export class SliceExceeded extends Error {
  constructor(what: string) {
    super(`the step's ${what} passed what this thread evaluates inline`);
    this.name = "SliceExceeded";
  }
}

let current: Readonly<StepSlice> | undefined;

export function inlineSlice(): Readonly<StepSlice> | undefined {
  return current;
}

/** Sets (or clears) the slice for this thread; runtime/offload/ does, at start-up. */
export function setInlineSlice(slice: StepSlice | undefined): void {
  current = slice ? Object.freeze({ ...slice }) : undefined;
}

/**
 * Runs `fn` with no slice: for work that must finish where it is (replaying a
 * journal for a fork or a redrive) and is bounded by its own size.
 */
export function unsliced<T>(fn: () => T): T {
  const outer = current;
  current = undefined;
  try {
    return fn();
  } finally {
    current = outer;
  }
}
