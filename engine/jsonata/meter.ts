import { inlineSlice, SliceExceeded } from "../core/step-slice.js";
import type { Meter } from "./runtime.js";

/**
 * The meter a state's expressions share (evaluate.ts): a plain counter, or, where
 * this thread evaluates only a slice of the budget (core/step-slice.ts), one that
 * stops the step once it passes the slice.
 */
export function newMeter(): Meter {
  const slice = inlineSlice();
  return slice ? new SlicedMeter(slice.jsonataSteps, slice.regexChars) : { steps: 0 };
}

/**
 * jsonata's guardrail counts with `++meter.steps` (vendor/README.md, patch 3), and
 * the size charges of compile.ts and regex.ts add to `steps`: the slice is checked
 * where the count is written, so no evaluation path can step past it.
 */
class SlicedMeter implements Meter {
  private count = 0;
  private searched = 0;

  constructor(
    private readonly slice: number,
    private readonly searchSlice: number,
  ) {}

  get steps(): number {
    return this.count;
  }

  set steps(value: number) {
    this.count = value;
    if (value > this.slice) throw new SliceExceeded("JSONata evaluation");
  }

  /** Before a search that may read up to `chars` characters: past the slice, the step runs on the thread. */
  beforeSearch(chars: number): void {
    if (this.searched + chars > this.searchSlice)
      throw new SliceExceeded("regular expression searches");
  }

  /** After a search, what it read (regex-cost.ts's bound). */
  afterSearch(read: number): void {
    this.searched += read;
  }
}

/** Before a regex search that may read up to `chars` characters (regex.ts); nothing for a plain meter. */
export function beforeSearch(meter: Meter, chars: number): void {
  if (meter instanceof SlicedMeter) meter.beforeSearch(chars);
}

/** After a regex search that read `read` characters. */
export function afterSearch(meter: Meter, read: number): void {
  if (meter instanceof SlicedMeter) meter.afterSearch(read);
}
