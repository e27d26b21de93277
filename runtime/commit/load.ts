import type { RunEventBody } from "../../engine/core/events.js";
import type { Json } from "../../engine/core/json.js";
import type { RunState } from "../../engine/core/run.js";
import type { StoredInput } from "../payloads/frame-input.js";
import { unpack } from "../store/codec.js";
import { executionOf } from "../store/ids.js";
import { loadTransition, type LoadSnapshot } from "../store/scripts/load-transition.js";
import { parkPaused } from "../store/scripts/pause-execution.js";
import type { HistoryHead } from "./commit-locks.js";
import { RECORD_FIELDS } from "./execution-cache.js";
import type { AdvanceResult, TransitionDeps } from "./transition.js";

/**
 * Steps 1–2 of the commit protocol (transition.ts): load the run, its inbox head
 * and the execution's history count and chain head in one script, or say why
 * the job has nothing to do (stale, idle, missing, paused).
 */

/** What a commit leaves behind that the next transition of the same run needs. */
export interface Loaded {
  state: RunState;
  seq: number;
  head: string;
  /**
   * The events queued behind `head`, as the run's last commit answered them (none
   * after a load): its next commit may take them too (plan.ts, "queued").
   */
  queued?: string[];
  /** The execution's history count and chain head (`hc`, `hh`) the step builds on. */
  history: HistoryHead;
  /** The frame input the run hash keeps apart (field `in`), if it keeps one. */
  apart: StoredInput | undefined;
}

/** Step 1–2 of the protocol: the run, its inbox head and the history count, or why there is nothing to do. */
export async function load(
  deps: TransitionDeps,
  run: string,
  seq: number,
): Promise<Loaded | { result: AdvanceResult }> {
  const { keys } = deps;
  const exec = executionOf(run);
  const held = deps.inputs?.get(run);
  // An execution not cached here (a timer of one started long ago, or elsewhere):
  // its record comes with the run, not in a round trip of its own before the step.
  const cold = !deps.executions.has(exec);
  const loaded = await deps.client.call(
    loadTransition,
    { run: keys.run(run), inbox: keys.inbox(run), execution: keys.execution(exec) },
    {
      base: keys.base,
      inputVersion: held?.version,
      ...(cold ? { recordFields: RECORD_FIELDS } : {}),
    },
  );
  if (loaded.kind === "missing") return { result: "missing" };
  return fromSnapshot(deps, run, seq, loaded);
}

/** Step 2 of the protocol, on what a load (or a claim, worker/scheduler.ts) read of the run. */
export async function fromSnapshot(
  deps: TransitionDeps,
  run: string,
  seq: number,
  loaded: LoadSnapshot,
): Promise<Loaded | { result: AdvanceResult }> {
  const exec = executionOf(run);
  const held = deps.inputs?.get(run);
  if (loaded.seq !== seq) {
    if (deps.ensureWhenStale !== false) await deps.queues.ensure(loaded.fx);
    return { result: "stale" };
  }
  const inboxHead = loaded.head;
  if (!inboxHead) return { result: "idle" };
  if (loaded.paused && !isStop(inboxHead) && (await park(deps, run))) {
    return { result: "paused" };
  }
  const { state: stateStored } = loaded;
  if (!stateStored) return { result: "missing" };
  // (A record without these fields packs as an empty list: the step's own read says what is wrong.)
  const record = loaded.record;
  if (record && !Array.isArray(record) && !deps.executions.rememberNow(exec, record)) {
    await deps.executions.remember(exec, record);
  }
  const state = JSON.parse(unpack(stateStored)) as RunState;
  const apart = frameInput(deps, run, state, loaded, held);
  const history = { count: loaded.historyCount, hash: loaded.historyHead };
  return { state, seq, head: inboxHead, history, apart };
}

/**
 * A large frame input is kept apart from the state (payloads/frame-input.ts): sent
 * only when this process does not hold that version already. Put back into
 * `state`, and answered for the commit to know it is kept.
 */
function frameInput(
  deps: TransitionDeps,
  run: string,
  state: RunState,
  { input: inputStored, inputVersion: version }: LoadSnapshot,
  /** What this process held of the run's input when the snapshot was taken. */
  held: StoredInput | undefined,
): StoredInput | undefined {
  if (!version || !state.current) return undefined;
  let apart: StoredInput;
  if (inputStored) {
    apart = { value: JSON.parse(unpack(inputStored)) as Json, version };
    deps.inputs?.set(run, apart);
  } else if (held?.version === version) {
    apart = held;
  } else {
    throw new Error(`run ${run}: its state's input (version ${version}) was not loaded`);
  }
  state.current.input = apart.value;
  return apart;
}

/** Stops (the API's, the timeout's, a give-up's) go through a pause: they end it. */
function isStop(head: string): boolean {
  return (JSON.parse(head) as RunEventBody).type === "Stop";
}

/** Parks the run of a paused execution; false when it was resumed meanwhile (go on). */
async function park(deps: TransitionDeps, run: string): Promise<boolean> {
  const exec = executionOf(run);
  const reply = await deps.client.call(
    parkPaused,
    {
      execution: deps.keys.execution(exec),
      parked: deps.keys.parked(exec),
      schedule: deps.keys.schedule,
    },
    { run },
  );
  return reply.kind === "parked";
}
