import type { RunEvent, RunEventBody } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { ExecutionContext, RunState } from "../../engine/core/run.js";
import { PayloadNeeded } from "../../engine/core/payload-ref.js";
import { isoTime } from "../../engine/core/timestamp.js";
import type { Program } from "../../engine/program.js";
import { waitsForToken } from "../../engine/states/task.js";
import { step, type StepResult } from "../../engine/step.js";
import { stepHere } from "../../engine/drivers/heavy-steps.js";
import { chainEvents, UNANCHORED } from "../audit/chain.js";
import { checkpointSigner } from "../audit/checkpoints.js";
import { storedState, type StoredInput } from "../payloads/frame-input.js";
import { PayloadBatch } from "../payloads/history-payloads.js";
import { pack } from "../store/codec.js";
import { executionOf, randomToken, shortId } from "../store/ids.js";
import type { CommitOp } from "../store/scripts/commit-transition.js";
import { executionFault } from "../tracing/logger.js";
import type { HistoryHead } from "./commit-locks.js";
import { planOps } from "./effects.js";
import type { LoadedExecution } from "./execution-cache.js";
import { exceedsHistoryCap, historyCapStop } from "./history-cap.js";
import type { TransitionDeps } from "./transition.js";

/**
 * Steps 3–4 of the commit protocol (transition.ts), and what the commit of step 5
 * writes: the head event stamped with its time, id and (when it may mint a task
 * token) a nonce; the pure `step` on it, batched while each step only continues
 * its own run ("Batching"); then the steps' history events chained on the
 * history head, their ops (effects.ts), journal entries and the run's new state.
 * Nothing is written here: a race re-plans from a new head.
 */

/** One step of a commit: the state it started from, the event it took, and what it did. */
export interface Stepped {
  before: RunState;
  event: RunEvent;
  result: StepResult;
}

/** Everything one fenced commit writes, planned from the run and the history head. */
export interface CommitPlan {
  /** When the steps happen (ms): their events' time, the commit's `now`. */
  now: number;
  steps: Stepped[];
  /** The steps' history events, in order. */
  history: HistoryEvent[];
  /** Those events as stored, with their chain hashes, and the new chain head. */
  chained: { stored: string[]; head: string };
  payloads: PayloadBatch;
  ops: CommitOp[];
  /** One packed journal entry per step. */
  journal: ReturnType<typeof pack>[];
  /** The execution's end, when the commit ends it. */
  end: Extract<CommitOp, { op: "end" }> | undefined;
  /** The run's new state (and the frame input it keeps apart), or `DROPPED`. */
  stored: ReturnType<typeof storedState>;
  /** The events queued behind the head that later steps took ("queued"), in inbox order. */
  taken: string[];
}

/** What a run its commit deletes stores (`dropRun`): nothing. */
export const DROPPED: ReturnType<typeof storedState> = { state: "", ops: [], apart: undefined };

/** Where a commit starts: the run as loaded, its head event, and when the step happens. */
export interface PlanInput {
  execution: LoadedExecution;
  state: RunState;
  body: RunEventBody;
  /** Events queued behind the head (JSON, inbox order) the batch may take after it ("queued"). */
  queued?: string[] | undefined;
  apart: StoredInput | undefined;
  /** The history head the steps' events go on. */
  history: HistoryHead;
  seq: number;
  now: number;
  /** When the execution started (ms), for its end's move between status indexes. */
  startedMs: number | undefined;
  maxSteps: number;
}

/** Steps the run (up to `maxSteps`, see "Batching") and plans the commit of those steps. */
export async function planCommit(
  deps: TransitionDeps,
  run: string,
  input: PlanInput,
): Promise<CommitPlan> {
  const { execution, state, history: head, now } = input;
  const exec = executionOf(run);
  const { steps, taken } = await stepBatch(
    deps,
    exec,
    execution,
    state,
    input.body,
    input.queued ?? [],
    head.count,
    now,
    input.maxSteps,
  );
  const last = steps.at(-1)!;
  const history = steps.flatMap((s) => s.result.history);
  // An execution started before the chain has no head: its chain starts unanchored.
  // Each distinct large payload is written once per execution (payloads/history-payloads.ts).
  const payloads = new PayloadBatch();
  // Signed checkpoints when the key is outside Redis (audit/checkpoints.ts).
  const chained = chainEvents(
    head.hash || UNANCHORED,
    history,
    (e) => payloads.event(e),
    checkpointSigner(deps.settings.auditKeyFile),
  );
  const ops = plannedOps(deps, steps, shortId(state.runId), payloads, input);
  const journal = steps.map(({ before, event }) => pack(payloads.journal(before.runId, event)));
  const end = ops.find((o): o is Extract<CommitOp, { op: "end" }> => o.op === "end");
  // A run its commit deletes (a success's root, `dropRun`) keeps no state: none is built.
  const stored = end?.dropRun
    ? DROPPED
    : storedState(last.result.run, input.apart, `${now}.${input.seq + 1}`);
  return { now, steps, history, chained, payloads, ops, journal, end, stored, taken };
}

/** The ops of every step (effects.ts), but the Continues a later step of the batch took in memory. */
function plannedOps(
  deps: TransitionDeps,
  steps: Stepped[],
  self: string,
  payloads: PayloadBatch,
  { execution, now, startedMs }: PlanInput,
): CommitOp[] {
  return steps.flatMap(({ event, result }, i) => {
    const planned = planOps(result.run, event, result.effects, {
      now,
      payloads,
      retentionSeconds: deps.settings.retentionSeconds,
      approvalEvents: deps.settings.approvalEvents,
      tokenPrefix: deps.keys.tokenPrefix,
      noTimeout: execution.program.definition.TimeoutSeconds === undefined,
      startedMs,
      ...(deps.taskMode ? { taskMode: deps.taskMode } : {}),
    });
    // A batched step's Continue was taken in memory by the next step: it is not pushed.
    return i === steps.length - 1 ? planned : planned.filter((o) => !isContinueOf(o, self));
  });
}

function isContinueOf(op: CommitOp, run: string): boolean {
  return op.op === "push" && op.run === run && !op.front && op.event === CONTINUE;
}

const CONTINUE = JSON.stringify({ type: "Continue" } satisfies RunEventBody);

/**
 * Step 4, batched: steps the run on `first`, then, while a step's only effect is
 * to continue this same run (a Pass, a Choice, a state entered) and the batch
 * lasts, steps it on that Continue in memory instead of pushing it and
 * committing in between. The batch commits as one.
 *
 * Queued (issue 43): a Map's or Parallel's parent is woken by each child's end, and
 * took them one commit each, in turn: a wide Map's parent committed once per item,
 * one round trip apart. When the run's last commit answered with the events queued
 * behind its head (`queued`, fenced-commit.ts), the batch takes the children's ends
 * among them in order, as the inbox would hand them out, while each step only
 * keeps its join's books (no effect but children started or outputs kept): the
 * commit pops them all, fenced by every one of them (commit-transition.ts `queued`).
 */
async function stepBatch(
  deps: TransitionDeps,
  exec: string,
  { context, program }: LoadedExecution,
  state: RunState,
  first: RunEventBody,
  queued: readonly string[],
  historyCount: number,
  now: number,
  maxSteps: number,
): Promise<{ steps: Stepped[]; taken: string[] }> {
  const steps: Stepped[] = [];
  const taken: string[] = [];
  const time = isoTime(now);
  let before = state;
  let body = first;
  let hc = historyCount;
  for (;;) {
    const stamped = { ...body, time, eventId: hc + 1 } as RunEvent;
    if (needsNonce(program, before, body)) stamped.nonce = deps.keys.tokenPrefix + randomToken();
    let stepped: { event: RunEvent; result: StepResult };
    try {
      const here = stepOrFail(deps, program, context, before, stamped);
      stepped = here instanceof Promise ? await here : here;
    } catch (err) {
      // The step read into a payload stored by reference that this process has not
      // loaded (engine/core/payload-ref.ts): load it, and step again.
      if (!(err instanceof PayloadNeeded)) throw err;
      if (!(await deps.executions.loadPayload(exec, err.hash)))
        throw new Error(`execution '${exec}': stored payload ${err.hash} is missing`);
      continue;
    }
    let { event, result } = stepped;
    const cap = deps.settings.maxHistoryEvents;
    // A stop always goes through: it is how a run that hit the quota ends.
    if (event.type !== "Stop" && exceedsHistoryCap(hc, result.history, cap)) {
      event = historyCapStop(cap, hc, event);
      result = step(program, context, before, event);
    }
    steps.push({ before, event, result });
    hc += result.history.length;
    // The chain's time budget bounds a batch too: a slow state (a heavy JSONata
    // expression) does not hold the worker's slot for a whole batch of them.
    if (steps.length >= maxSteps || Date.now() - now >= deps.settings.chain.ms) break;
    const next = taken.length === 0 ? nextContinue(result, before.runId) : undefined;
    if (next) {
      before = result.run;
      body = next;
      continue;
    }
    // (Continues are taken in memory only alone, queued events only without them.)
    const following = queued[taken.length];
    if (steps.length > taken.length + 1 || following === undefined) break;
    if (!keepsBooks(result, event)) break;
    const parsed = JSON.parse(following) as RunEventBody;
    if (parsed.type !== "ChildEnded") break;
    taken.push(following);
    before = result.run;
    body = parsed;
  }
  return { steps, taken };
}

/** The next event of a batch of Continues: the step's one effect continues its own run. */
function nextContinue(result: StepResult, runId: string): RunEventBody | undefined {
  return continuesItself(result, runId) ? { type: "Continue" } : undefined;
}

/** Effects a join's child end may have that leave the parent's inbox and record alone. */
const BOOKKEEPING = new Set(["SpawnChildren", "KeepOutputs", "KeepInputs", "StorePayload"]);

/**
 * The step took a child's end (or started the run's wait for its children) and did
 * nothing but keep its join's books: the run still waits for children, and none of
 * its effects puts an event in its own inbox, ends it or calls anything. The
 * events queued behind may then be stepped in the same commit.
 */
function keepsBooks(result: StepResult, event: RunEvent): boolean {
  if (event.type !== "ChildEnded") return false;
  if (result.run.status !== "RUNNING") return false;
  if (result.run.current?.phase.kind !== "children") return false;
  return result.effects.every((e) => BOOKKEEPING.has(e.type));
}

/** The step's one effect is to continue its own run, which is still running. */
function continuesItself(result: StepResult, runId: string): boolean {
  const [effect, ...more] = result.effects;
  return (
    more.length === 0 &&
    effect?.type === "Continue" &&
    effect.runId === runId &&
    result.run.status === "RUNNING"
  );
}

/**
 * `step` is pure: an exception it throws would come back on every retry and the
 * run would never move. So the run is given up the way AWS reports its own
 * faults, with States.Runtime, and the journal records the replacement event.
 */
function stepOrFail(
  deps: TransitionDeps,
  program: Program,
  context: ExecutionContext,
  state: RunState,
  event: RunEvent,
): SteppedEvent | Promise<SteppedEvent> {
  const failure = (err: unknown): SteppedEvent => {
    if (event.type === "Stop" || err instanceof PayloadNeeded) throw err;
    const failed: RunEvent = {
      type: "Stop",
      status: "FAILED",
      error: "States.Runtime",
      cause: `Stepwise could not process the ${event.type} event of state '${state.current?.name ?? "?"}': ${err instanceof Error ? err.message : String(err)}`,
      time: event.time,
      eventId: event.eventId,
    };
    deps.onError?.(executionFault(err, context.executionId, state.current?.name));
    return { event: failed, result: step(program, context, state, failed) };
  };
  let result: StepResult | Promise<StepResult>;
  try {
    // Here, unless its expressions pass this thread's slice (engine/drivers/heavy-steps.ts).
    result = stepHere(program, context, state, event);
  } catch (err) {
    return failure(err);
  }
  if (result instanceof Promise) return result.then((r) => ({ event, result: r }), failure);
  return { event, result };
}

type SteppedEvent = { event: RunEvent; result: StepResult };

/**
 * Only a step that may schedule a `.waitForTaskToken` task needs fresh entropy
 * (same rule as the in-memory driver); others keep the journal small.
 */
function needsNonce(program: Program, run: RunState, body: RunEventBody): boolean {
  if (body.type !== "Continue" && body.type !== "TimerFired") return false;
  const frame = run.current;
  if (!frame) return false;
  const state = program.scopes.get(run.scope)?.states[frame.name];
  return state?.Type === "Task" && waitsForToken(state.Resource);
}
