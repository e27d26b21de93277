import type { RunEvent, RunEventBody } from "../../engine/core/events.js";
import type { Json } from "../../engine/core/json.js";
import type { ExecutionContext, RunState } from "../../engine/core/run.js";
import type { Program } from "../../engine/program.js";
import { step, type StepResult } from "../../engine/step.js";
import { PayloadNeeded } from "../../engine/core/payload-ref.js";
import { isoTime } from "../../engine/core/timestamp.js";
import { waitsForToken } from "../../engine/states/task.js";
import type { TaskMode } from "../../task-runners/resources.js";
import { chainEvents, UNANCHORED } from "../audit/chain.js";
import { checkpointSigner } from "../audit/checkpoints.js";
import { pack, unpack } from "../store/codec.js";
import { crashPoint } from "../worker/crash.js";
import { closedJoin, dropRun, joinedChild } from "./ended-runs.js";
import { planOps } from "./effects.js";
import { storedState, type InputCache, type StoredInput } from "../payloads/frame-input.js";
import { exceedsHistoryCap, historyCapStop } from "./history-cap.js";
import { executionOf, randomToken, shortId } from "../store/ids.js";
import { PayloadBatch } from "../payloads/history-payloads.js";
import { parseJob, stepJob } from "../store/job-ids.js";
import type { Keys } from "../store/keys.js";
import type { HeldRuns } from "./held-runs.js";
import type { TaskCallClaimReply } from "../store/scripts/task-call-claim.js";
import type { ExecutionLocks, HistoryHead } from "./commit-locks.js";
import { RECORD_FIELDS, type ExecutionCache, type LoadedExecution } from "./execution-cache.js";
import type { JobQueues } from "../worker/queues.js";
import type { RedisClient } from "../store/redis.js";
import { commitTransition, type CommitOp } from "../store/scripts/commit-transition.js";
import { loadTransition, type LoadSnapshot } from "../store/scripts/load-transition.js";
import { parkPaused } from "../store/scripts/pause-execution.js";
import type { RuntimeSettings } from "../settings.js";
import { emitCommitSpans } from "../tracing/commit-spans.js";
import { executionFault } from "../tracing/logger.js";
import type { SpanSink } from "../tracing/sink.js";

/**
 * THE DURABLE COMMIT PROTOCOL (DESIGN.md, "Durable commit").
 *
 * State per run (a Map iteration or Parallel branch is a run of its own):
 *   run hash  `r:<run>`  s = RunState JSON, q = seq, fx = follow-ups of the last commit
 *   inbox     `i:<run>`  events waiting for the run, oldest first
 * A run needs processing exactly when its inbox is not empty.
 *
 * One transition = one BullMQ job `<run>@<seq>` (queue `steps`). The job:
 *   1. loads the run, its inbox head and the execution's history count and chain
 *      head (one script);
 *   2. if the run's seq is not the job's, the job is stale (a duplicate, or a
 *      redelivery after its own commit): it re-enqueues `fx`, the follow-ups of the
 *      run's last commit (idempotent), and acknowledges;
 *   3. stamps the head event with the time, `eventId` = history count + 1 and, for
 *      a step that may mint a task token, 128 random bits (`nonce`);
 *   4. computes `step` — pure, nothing else happens yet;
 *   5. commits with `commitTransition`, ONE Lua script fenced by seq, by the inbox
 *      head, and (when it writes history) by the execution's history count: new
 *      state, seq + 1, history events appended with ids count+1..count+N, inbox
 *      pop, journal append, and every effect that lives in Redis (timers, task
 *      records and tokens, children, events pushed to other runs, the execution's
 *      end). A history-count mismatch means another run of the same execution
 *      (a sibling Map iteration) committed first: the job re-steps with the new
 *      ids and commits again, so ids stay 1..N with no gap or duplicate. The
 *      events' chain hashes (audit/chain.ts) are computed from the chain head
 *      loaded with the count, and the script checks and moves that head with the
 *      count: the chain follows the ids and never forks;
 *   6. enqueues the follow-up jobs the script returned (`<run>@<seq>` of every run
 *      that received an event, task jobs) with deterministic ids, then acks. A
 *      worker calls the tasks itself instead, when it has room (`callTask`,
 *      task-jobs.ts): each call is claimed, so a queued job of the same task waits.
 *      It also advances the runs the commit woke itself, when it has room
 *      (`advanceHere`, scheduler.ts `take`: a Map's iterations, the parent their
 *      ends wake), once per run; each woken run holds a lease in the schedule, so
 *      a process that dies first leaves it to the scheduler of another.
 *
 * Chaining: when a commit leaves events in the run's own inbox (a Pass chain's
 * next state, a Choice loop), the job does not enqueue `<run>@<seq+1>` and wait
 * for a worker to pick it up again; it goes on with that transition itself, from
 * the state it just committed (no load: the commit returns the new inbox head),
 * up to `settings.chain` transitions or milliseconds, then enqueues the follow-up
 * as usual. Each chained transition is still its own fenced commit with its own
 * history events, so nothing above changes: a commit that loses a race (a stop
 * pushed in front, another worker on the run) ends the chain, and a crash
 * mid-chain leaves the last commit's `fx` naming `<run>@<seq>`, which the
 * run's lease re-enqueues (a worker's redelivered, stale job does not: see
 * `ensureWhenStale`). DESIGN.md says "one
 * transition = one job"; chaining keeps its atomicity and costs three of the
 * four Redis round trips a transition otherwise needs (load, enqueue, BullMQ
 * fetch), which is what lets a lone execution advance thousands of states per
 * second. `STEPWISE_CHAIN_TRANSITIONS=1` restores one transition per job.
 *
 * Batching: most steps of a Pass chain, a Choice or a state being entered have
 * one effect, a Continue for their own run, which a commit would push to the
 * inbox only for the next transition to pop it again. The job steps on that
 * Continue in memory instead, and commits the steps together (up to
 * `BATCH_STEPS`, within the chain budget, which counts steps): one fenced commit
 * with all their history events (ids and chain hashes in order), one journal
 * entry per step, and the ops of every step but the Continues taken in memory.
 * Replay is unchanged (the journal holds each step's event), and so is every
 * fence: a race re-steps the whole batch. The batch passes the Continues ahead of
 * anything queued behind the head, so it asks to be the inbox's only event
 * (`alone`); when it is not (`crowded`), the run commits one step at a time, in
 * inbox order, as without batching. Batching cut the 20-state REST chain from
 * 0.45 of a bare BullMQ chain to 1.3 (bench/throughput-vs-bullmq.ts).
 *
 * Crash analysis: before 5, nothing was written; BullMQ redelivers the job (lock
 * expiry) and it runs again. Between 5 and 6's enqueue, the redelivered job is
 * stale and re-enqueues `fx`. A job re-created after a job of the same id was
 * completed and removed finds a stale seq, or (task) no pending task record, and
 * does nothing. Events delivered from outside a job (timers, callbacks, API
 * stops) go with a lease in the schedule (`r:<run>`): if their enqueue never
 * happens, the scheduler enqueues `<run>@<seq>` when the lease runs out (see
 * scheduler.ts). Commits renew or drop that lease, so it costs nothing while
 * things work. A fired timer's run is advanced by the worker that claimed it,
 * without a job and from the claim's snapshot of it instead of a load
 * (scheduler.ts, "Bursts"), and so is the run a task job delivered
 * its result to (task-jobs.ts); the same lease covers their crash. That run
 * is stepped from the state its worker committed when the result is its only
 * event (held-runs.ts): the commit's fences make a stale copy a reload.
 *
 * Faults: a job that throws is tried again with backoff (queues.ts,
 * STEP_ATTEMPTS); after the last attempt the worker gives up on the execution
 * (give-up.ts): it fails with States.Runtime through an ordinary Stop, or, when
 * even that cannot be processed, is ended FAILED by the giveUp script, and the
 * runs that cannot advance are deleted so their leases stop re-enqueueing them.
 *
 * Ended children: once a parent has committed a child's `ChildEnded`, the
 * child's run hash and inbox are deleted (ended-runs.ts); a redelivered job of
 * that child then loads nothing and is a no-op (`missing`).
 */
export interface TransitionDeps {
  client: RedisClient;
  keys: Keys;
  executions: ExecutionCache;
  queues: JobQueues;
  settings: RuntimeSettings;
  taskMode?: (resource: string) => TaskMode;
  /** Where an interpreter fault goes (it also fails the run with States.Runtime). */
  onError?: (err: unknown) => void;
  /** Per-execution turns inside this process (a worker has one; see commit/commit-locks.ts). */
  locks?: ExecutionLocks;
  /** Large frame inputs this process parsed (a worker has one; see frame-input.ts). */
  inputs?: InputCache;
  /** Where the spans a commit ends go (tracing/); none unless OTLP export is on. */
  spans?: SpanSink;
  /**
   * Calls a task a commit scheduled in this process (worker.ts), with its claim
   * when `claimAhead` sent one; false: queue it (the claim is given back).
   */
  callTask?: (task: string, claim?: Promise<TaskCallClaimReply>) => boolean;
  /**
   * Sends the claim on calling `task` in this process right behind the commit
   * that adds it, on the same connection, so it runs right after it in Redis and
   * the call waits no round trip of its own; undefined: no room for the call.
   * Every claim sent is handed to `callTask` (a failed commit's finds no task).
   */
  claimAhead?: (task: string) => Promise<TaskCallClaimReply> | undefined;
  /**
   * Advances, in this process, a run a commit gave events to (`<run>@<seq>`: a
   * Map iteration it started, the parent a child ended into); false: queue it.
   */
  advanceHere?: (run: string, seq: number) => boolean;
  /**
   * A stale job enqueues the follow-ups of its run's last commit again, in case
   * the process of that commit died before it did. `false` in a worker, queue
   * jobs and in-process advances alike (worker.ts): follow-ups are advanced in
   * process there, so they would come back as queue jobs with nothing to do (a
   * Map parent's are thousands), and the schedule's leases cover that death.
   */
  ensureWhenStale?: boolean;
  /** Runs committed into a task call this process makes (a worker has one; held-runs.ts). */
  held?: HeldRuns;
}

/** `paused`: the execution is paused; the run was parked with its events (pause.ts). */
export type AdvanceResult = "committed" | "stale" | "idle" | "missing" | "paused";

/** What a commit leaves behind that the next transition of the same run needs. */
interface Loaded {
  state: RunState;
  seq: number;
  head: string;
  /** The execution's history count and chain head (`hc`, `hh`) the step builds on. */
  history: HistoryHead;
  /** The frame input the run hash keeps apart (field `in`), if it keeps one. */
  apart: StoredInput | undefined;
}

/**
 * Processes the job `<run>@<seq>`: one transition, then — while the run still has
 * events, the chain budget lasts, and no other worker got in between — the run's
 * next transitions in the same job, each its own fenced commit (see "Chaining"
 * in the protocol above).
 */
export async function advance(
  deps: TransitionDeps,
  run: string,
  seq: number,
  /** Called at each commit (a chained job commits several) with the steps it took in. */
  onCommit?: (steps: number) => void,
  /**
   * What the caller knows of the run, so that its first transition needs no load:
   * `head`, the inbox head it just delivered as the only event (task-jobs.ts: a
   * run this process holds at `seq` is stepped from there), or `snapshot`, the
   * run as a claim loaded it (scheduler.ts). The commit's fences catch any change since.
   */
  from?: { head: string } | { snapshot: LoadSnapshot },
): Promise<AdvanceResult> {
  const budget = deps.settings.chain;
  const deadline = Date.now() + budget.ms;
  let known: Loaded | undefined;
  if (from && "head" in from) {
    const held = deps.held?.take(run, seq);
    if (held) known = { ...held, head: from.head };
  } else if (from) {
    const loaded = await fromSnapshot(deps, run, seq, from.snapshot);
    if ("result" in loaded) return loaded.result;
    known = loaded;
  }
  // Steps count against the budget, whether they commit alone or batched.
  let done = await transition(deps, run, seq, known, budget.transitions);
  const result = done.result;
  if (result === "committed") onCommit?.(done.steps);
  for (let n = done.steps; done.next; n += done.steps) {
    if (n >= budget.transitions || Date.now() >= deadline) {
      // Budget spent with events left: the run goes back to the queue like any follow-up.
      await deps.queues.ensure(stepJob(run, done.next.seq));
      break;
    }
    done = await transition(deps, run, done.next.seq, done.next, budget.transitions - n);
    if (done.result === "committed") onCommit?.(done.steps);
  }
  return result;
}

/** One commit of up to `steps` steps (see "Batching"); `next`: the run's next transition may chain. */
async function transition(
  deps: TransitionDeps,
  run: string,
  seq: number,
  known: Loaded | undefined,
  steps: number,
): Promise<{ result: AdvanceResult; next?: Loaded; steps: number }> {
  const exec = executionOf(run);
  let loaded: Loaded | { result: AdvanceResult } | undefined = known;
  for (;;) {
    loaded ??= await load(deps, run, seq);
    if ("result" in loaded) return { result: loaded.result, steps: 1 };
    const input = loaded;
    const turn = () => stepAndCommit(deps, run, seq, input, steps > 1, steps);
    const outcome = deps.locks ? await deps.locks.run(exec, turn) : await turn();
    if (outcome === "reload") {
      loaded = undefined;
      continue;
    }
    // Enqueueing happens after the turn: it needs no fence, and others wait for the turn.
    const queued = callHere(deps, outcome.ensure, outcome.claim);
    if (queued) await deps.queues.ensure(queued);
    const taken = outcome.steps ?? 1;
    return outcome.next
      ? { result: outcome.result, next: outcome.next, steps: taken }
      : { result: outcome.result, steps: taken };
  }
}

/** Step 1–2 of the protocol: the run, its inbox head and the history count, or why there is nothing to do. */
async function load(
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
    { inputVersion: held?.version, ...(cold ? { recordFields: RECORD_FIELDS } : {}) },
  );
  if (loaded.kind === "missing") return { result: "missing" };
  return fromSnapshot(deps, run, seq, loaded);
}

/** Step 2 of the protocol, on what a load (or a claim, scheduler.ts) read of the run. */
async function fromSnapshot(
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
  const { state: stateStored, input: inputStored, inputVersion: version } = loaded;
  if (!stateStored) return { result: "missing" };
  // (A record without these fields packs as an empty list: the step's own read says what is wrong.)
  const record = loaded.record;
  if (record && !Array.isArray(record) && !deps.executions.rememberNow(exec, record)) {
    await deps.executions.remember(exec, record);
  }
  const state = JSON.parse(unpack(stateStored)) as RunState;
  let apart: StoredInput | undefined;
  if (version && state.current) {
    // A large frame input is kept apart from the state (frame-input.ts): sent only
    // when this process does not hold that version already.
    if (inputStored) {
      apart = { value: JSON.parse(unpack(inputStored)) as Json, version };
      deps.inputs?.set(run, apart);
    } else if (held?.version === version) {
      apart = held;
    } else {
      throw new Error(`run ${run}: its state's input (version ${version}) was not loaded`);
    }
    state.current.input = apart.value;
  }
  const history = { count: loaded.historyCount, hash: loaded.historyHead };
  return { state, seq, head: inboxHead, history, apart };
}

/** The keys of a commit of `run` (store/scripts/commit-transition.ts). */
export function commitKeys(keys: Keys, run: string): Record<CommitKey, string> {
  const exec = executionOf(run);
  return {
    run: keys.run(run),
    inbox: keys.inbox(run),
    execution: keys.execution(exec),
    history: keys.history(exec),
    journal: keys.journal(exec),
    payloads: keys.payloads(exec),
    schedule: keys.schedule,
    tasks: keys.tasks,
    tokens: keys.tokens,
  };
}

type CommitKey = (typeof commitTransition.keys)[number];

/** `steps`: how many steps the commit took in (batched, see "Batching"). */
type Outcome = {
  result: AdvanceResult;
  next?: Loaded;
  ensure?: string | null;
  steps?: number;
  /** The claim sent behind the commit for the task it adds (`claimAhead`). */
  claim?: AheadClaim;
};

interface AheadClaim {
  task: string;
  reply: Promise<TaskCallClaimReply>;
}

/** The task a commit adds for this process to call, if it adds one (a run waits on one at most). */
function calledTask(ops: readonly CommitOp[]): string | undefined {
  const op = ops.find((o) => o.op === "task" && o.mode === "call");
  return op?.op === "task" ? op.task : undefined;
}

/** The claim on the commit's task call, sent now, behind the commit (`claimAhead`). */
function claimBehind(deps: TransitionDeps, task: string | undefined): AheadClaim | undefined {
  if (task === undefined || !deps.claimAhead || !deps.callTask) return undefined;
  const reply = deps.claimAhead(task);
  return reply && { task, reply };
}

/** A claim sent ahead goes to `callTask` whatever became of its commit: it is called only if claimed. */
function handOver(deps: TransitionDeps, claim: AheadClaim | undefined): void {
  if (claim) deps.callTask?.(claim.task, claim.reply);
}

/** One step of a commit: the state it started from, the event it took, and what it did. */
interface Stepped {
  before: RunState;
  event: RunEvent;
  result: StepResult;
}

/** What a run its commit deletes stores (`dropRun`): nothing. */
const DROPPED: ReturnType<typeof storedState> = { state: "", ops: [], apart: undefined };

/** Most steps one commit takes in (see "Batching" in the protocol above). */
const BATCH_STEPS = 64;

/** Steps 3–5: stamp the head event, step, commit; again with new ids when a sibling wrote history first. */
async function stepAndCommit(
  deps: TransitionDeps,
  run: string,
  seq: number,
  { state, head, history: loadedHistory, apart }: Loaded,
  mayChain: boolean,
  maxSteps: number,
): Promise<Outcome | "reload"> {
  const { client, keys, locks } = deps;
  const exec = executionOf(run);
  const execution = deps.executions.peek(exec) ?? (await deps.executions.get(exec));
  const body = JSON.parse(head) as RunEventBody;
  // The start as stored with the record (executions/execution-store.ts: its ISO text and its index score are one instant).
  const parsedStart = Date.parse(execution.context.startTime);
  const startedMs = Number.isFinite(parsedStart) ? parsedStart : undefined;
  let { count: hc, hash: hh } = locks ? locks.historyHead(exec, loadedHistory) : loadedHistory;
  let batch = Math.max(1, Math.min(maxSteps, BATCH_STEPS));
  for (;;) {
    const now = Date.now();
    const steps = await stepBatch(deps, exec, execution, state, body, hc, now, batch);
    const last = steps.at(-1)!;
    const history = steps.flatMap((s) => s.result.history);
    // An execution started before the chain has no head: its chain starts unanchored.
    // Each distinct large payload is written once per execution (payloads/history-payloads.ts).
    const payloads = new PayloadBatch();
    // Signed checkpoints when the key is outside Redis (audit/checkpoints.ts).
    const chained = chainEvents(
      hh || UNANCHORED,
      history,
      (e) => payloads.event(e),
      checkpointSigner(deps.settings.auditKeyFile),
    );
    const self = shortId(state.runId);
    const ops = steps.flatMap(({ event, result }, i) => {
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
    const journal = steps.map(({ before, event }) => pack(payloads.journal(before.runId, event)));
    const end = ops.find((o) => o.op === "end");
    // A run its commit deletes (a success's root, `dropRun`) keeps no state: none is built.
    const stored =
      end?.op === "end" && end.dropRun
        ? DROPPED
        : storedState(last.result.run, apart, `${now}.${seq + 1}`);
    const child = run !== exec;
    const collects = last.result.effects.some((e) => e.type === "CollectResults");
    crashPoint("beforeCommit", child, collects);
    const committing = client.call(commitTransition, commitKeys(keys, run), {
      base: keys.base,
      run,
      seq,
      head,
      alone: steps.length > 1,
      state: stored === DROPPED ? "" : pack(stored.state),
      journal,
      payloads: payloads.toArgs(),
      events: chained.stored.map(pack),
      historyCount: hc,
      historyHead: hh,
      newHistoryHead: chained.head,
      now,
      leaseMs: deps.settings.leaseMs,
      tombstoneSeconds: deps.settings.tombstoneTtlSeconds,
      ops: [...ops, ...stored.ops],
    });
    const called = calledTask(ops);
    const claim = claimBehind(deps, called);
    let reply: Awaited<typeof committing>;
    try {
      reply = await committing;
    } catch (err) {
      handOver(deps, claim);
      throw err;
    }
    if (reply.kind !== "committed") handOver(deps, claim);
    switch (reply.kind) {
      case "committed": {
        if (stored.apart !== apart) deps.inputs?.set(run, stored.apart);
        crashPoint("afterCommit", child, collects);
        // The child whose end this commit took in is needed no more (ended-runs.ts).
        const first = steps[0]!;
        const joined = joinedChild(first.event);
        if (joined) dropRun(client, keys, joined, closedJoin(first.event, first.result.run));
        const committed =
          history.length > 0
            ? { count: hc + history.length, hash: chained.head }
            : { count: hc, hash: hh };
        locks?.committed(exec, committed);
        // Ended: no transition of it follows (a redrive loads it again), so its cache
        // entry goes now, while it is young, not 20,000 executions later (commit/execution-cache.ts).
        if (end) deps.executions.forget(exec);
        if (deps.spans) {
          for (const s of steps)
            emitCommitSpans(deps.spans, execution, s.before, s.result.run, s.result.history);
        }
        const { seq: newSeq, fx, head: nextHead } = reply;
        // Waiting for a call this process may make: its result can step the run from here.
        if (!nextHead && deps.held && called !== undefined) {
          const state = last.result.run;
          deps.held.hold(run, { state, seq: newSeq, history: committed, apart: stored.apart });
        }
        if (!mayChain || !nextHead)
          return { result: "committed", ensure: fx, steps: steps.length, claim };
        // Every follow-up but this run's own next job: the chain takes that one.
        const selfJob = stepJob(run, newSeq);
        return {
          result: "committed",
          steps: steps.length,
          claim,
          next: {
            state: last.result.run,
            seq: newSeq,
            head: nextHead,
            history: committed,
            apart: stored.apart,
          },
          ensure: fx
            .split(" ")
            .filter((f) => f !== selfJob)
            .join(" "),
        };
      }
      case "raced":
        hc = reply.historyCount;
        hh = reply.historyHead;
        locks?.committed(exec, { count: hc, hash: hh });
        // Paused meanwhile (a chained transition has no load of its own to see it).
        if (reply.paused && body.type !== "Stop") return "reload";
        continue;
      case "crowded":
        // Other events wait behind the head: they go first, as without batching.
        batch = 1;
        continue;
      case "stale":
        return { result: "stale", ensure: reply.fx };
      case "missing":
        return { result: "missing" };
      case "headChanged":
        // A stop went in front: load again.
        return "reload";
    }
  }
}

/**
 * Step 4, batched: steps the run on `first`, then, while a step's only effect is
 * to continue this same run (a Pass, a Choice, a state entered) and the batch
 * lasts, steps it on that Continue in memory instead of pushing it and
 * committing in between. The batch commits as one.
 */
async function stepBatch(
  deps: TransitionDeps,
  exec: string,
  { context, program }: LoadedExecution,
  state: RunState,
  first: RunEventBody,
  historyCount: number,
  now: number,
  maxSteps: number,
): Promise<Stepped[]> {
  const steps: Stepped[] = [];
  const time = isoTime(now);
  let before = state;
  let body = first;
  let hc = historyCount;
  for (;;) {
    const stamped = { ...body, time, eventId: hc + 1 } as RunEvent;
    if (needsNonce(program, before, body)) stamped.nonce = deps.keys.tokenPrefix + randomToken();
    let stepped: { event: RunEvent; result: StepResult };
    try {
      stepped = stepOrFail(deps, program, context, before, stamped);
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
    if (
      steps.length >= maxSteps ||
      !continuesItself(result, before.runId) ||
      Date.now() - now >= deps.settings.chain.ms
    )
      return steps;
    before = result.run;
    body = { type: "Continue" };
  }
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

function isContinueOf(op: CommitOp, run: string): boolean {
  return op.op === "push" && op.run === run && !op.front && op.event === CONTINUE;
}

const CONTINUE = JSON.stringify({ type: "Continue" } satisfies RunEventBody);

/**
 * The follow-ups left for the queue once this process took the task calls and
 * the run advances it has room for (worker.ts): each skips a queue job's add,
 * fetch and finish. Every run a commit woke holds a lease in the schedule, so
 * one this process dies before advancing is enqueued when the lease runs out.
 */
function callHere(
  deps: TransitionDeps,
  fx: string | null | undefined,
  claim?: AheadClaim,
): string | null | undefined {
  let ahead = claim;
  const claimOf = (task: string) => {
    if (ahead?.task !== task) return undefined;
    const reply = ahead.reply;
    ahead = undefined;
    return reply;
  };
  const queued: string[] = [];
  if (fx && (deps.callTask || deps.advanceHere)) {
    for (const entry of fx.split(" ")) {
      const job = parseJob(entry);
      if (job?.kind === "task" && deps.callTask?.(job.task, claimOf(job.task))) continue;
      if (job?.kind === "step" && deps.advanceHere?.(job.run, job.seq)) continue;
      queued.push(entry);
    }
  } else if (fx) return fx;
  handOver(deps, ahead);
  return queued.join(" ");
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
): { event: RunEvent; result: StepResult } {
  try {
    return { event, result: step(program, context, state, event) };
  } catch (err) {
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
  }
}

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
