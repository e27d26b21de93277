import type { Json } from "../../engine/core/json.js";
import type { RunState } from "../../engine/core/run.js";
import { pack } from "../store/codec.js";
import type { CommitOp } from "../store/scripts/commit-transition.js";

/**
 * A large input of a run's current state, kept apart from its run state.
 *
 * A state's input does not change while the run stays in the state, but the run
 * state is stored whole at every commit: the parent of a Map over 3,000 items
 * would write its 3,000-item input again at each of its 3,000 children's ends,
 * and read and parse it again at each load. So a large frame input lives in the
 * run hash apart (field `in`, with `iv`, a version), written when it changes and
 * left out of the stored state. `step` keeps the frame's input object as is while
 * the run stays in a state, so the same object means the stored copy is still
 * right; and a worker keeps the inputs it parsed (`InputCache`), so a load reads
 * the field only when its version is not the one the worker has.
 */
export interface StoredInput {
  value: Json;
  version: string;
}

/** From this size (JSON characters) on, a frame input is kept apart. */
export const INPUT_APART_CHARS = 2048;

/**
 * The run state to store, the commit's `input` op, and the input kept apart after
 * the commit. `version` names a new input: unique per run and commit.
 */
export function storedState(
  run: RunState,
  apart: StoredInput | undefined,
  version: string,
): { state: string; ops: CommitOp[]; apart: StoredInput | undefined } {
  const frame = run.current;
  if (frame) {
    const kept = apart !== undefined && apart.value === frame.input;
    const text = kept ? "" : JSON.stringify(frame.input);
    if (kept || text.length >= INPUT_APART_CHARS) {
      const state = JSON.stringify({ ...run, current: { ...frame, input: undefined } });
      if (kept) return { state, ops: [], apart };
      return {
        state,
        ops: [{ op: "keepInput", version, input: pack(text) }],
        apart: { value: frame.input, version },
      };
    }
  }
  return {
    state: JSON.stringify(run),
    ops: apart ? [{ op: "dropInput" }] : [],
    apart: undefined,
  };
}

/**
 * Inputs kept apart that this process parsed or wrote, by run: the most recent
 * 64 (an input is at most 256 KiB, AWS's payload limit, so at most 16 MiB of JSON).
 */
export class InputCache {
  private readonly entries = new Map<string, StoredInput>();

  constructor(private readonly max = 64) {}

  get(run: string): StoredInput | undefined {
    return this.entries.get(run);
  }

  set(run: string, input: StoredInput | undefined): void {
    this.entries.delete(run);
    if (!input) return;
    this.entries.set(run, input);
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }
}
