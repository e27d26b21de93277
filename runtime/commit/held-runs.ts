import type { RunState } from "../../engine/core/run.js";
import type { HistoryHead } from "./commit-locks.js";
import type { StoredInput } from "../payloads/frame-input.js";

/** What a commit left of a run that now waits for the result of a task it called. */
export interface HeldRun {
  state: RunState;
  seq: number;
  history: HistoryHead;
  apart: StoredInput | undefined;
}

/**
 * The runs this worker committed into a task call it makes itself, as committed.
 * When the call's result is delivered and is the only event in the run's inbox,
 * the worker advances the run from here instead of loading it again: a model
 * turn saves a round trip and the parse of its state. Nothing here is trusted:
 * the commit is fenced as any other (seq, inbox head, history head), and a
 * refused one loads the run from Redis.
 */
export class HeldRuns {
  private readonly runs = new Map<string, HeldRun>();

  /** Bounded: a run's state may carry an input of up to 256 KiB. */
  constructor(private readonly max = 128) {}

  hold(run: string, held: HeldRun): void {
    this.runs.delete(run);
    this.runs.set(run, held);
    if (this.runs.size > this.max) {
      const oldest = this.runs.keys().next();
      if (!oldest.done) this.runs.delete(oldest.value);
    }
  }

  /** The run as committed at `seq`, once; undefined when another seq (or none) is held. */
  take(run: string, seq: number): HeldRun | undefined {
    const held = this.runs.get(run);
    this.runs.delete(run);
    return held?.seq === seq ? held : undefined;
  }

  get size(): number {
    return this.runs.size;
  }
}
