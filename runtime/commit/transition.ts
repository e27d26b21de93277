import type { TaskMode } from "../../task-runners/resources.js";
import type { ExecutionResult } from "../contract/index.js";
import type { InputCache } from "../payloads/frame-input.js";
import { executionOf } from "../store/ids.js";
import { stepJob } from "../store/job-ids.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";
import type { LoadSnapshot } from "../store/scripts/load-transition.js";
import type { TaskCallClaimReply } from "../store/scripts/task-call-claim.js";
import type { RuntimeSettings } from "../settings.js";
import type { SpanSink } from "../tracing/sink.js";
import type { JobQueues } from "../worker/queues.js";
import type { ExecutionLocks } from "./commit-locks.js";
import type { ExecutionCache } from "./execution-cache.js";
import { stepAndCommit } from "./fenced-commit.js";
import { callHere } from "./follow-ups.js";
import type { HeldRuns } from "./held-runs.js";
import { fromSnapshot, load, type Loaded } from "./load.js";

/** The keys of a commit (tests build commits with them): fenced-commit.ts. */
export { commitKeys } from "./fenced-commit.js";

/**
 * THE DURABLE COMMIT PROTOCOL (docs/architecture.md, "The transition", walks through it).
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
 *      worker/task-jobs.ts): each call is claimed, so a queued job of the same task waits.
 *      It also advances the runs the commit woke itself, when it has room
 *      (`advanceHere`, worker/scheduler.ts `take`: a Map's iterations, the parent their
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
 * `ensureWhenStale`). The protocol's first form was "one transition = one
 * job"; chaining keeps its atomicity and costs three of the
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
 * worker/scheduler.ts). Commits renew or drop that lease, so it costs nothing while
 * things work. A fired timer's run is advanced by the worker that claimed it,
 * without a job and from the claim's snapshot of it instead of a load
 * (worker/scheduler.ts, "Bursts"), and so is the run a task job delivered
 * its result to (worker/task-jobs.ts); the same lease covers their crash. That run
 * is stepped from the state its worker committed when the result is its only
 * event (held-runs.ts): the commit's fences make a stale copy a reload.
 *
 * Faults: a job that throws is tried again with backoff (worker/queues.ts,
 * STEP_ATTEMPTS); after the last attempt the worker gives up on the execution
 * (give-up.ts): it fails with States.Runtime through an ordinary Stop, or, when
 * even that cannot be processed, is ended FAILED by the giveUp script, and the
 * runs that cannot advance are deleted so their leases stop re-enqueueing them.
 *
 * Ended children: once a parent has committed a child's `ChildEnded`, the
 * child's run hash and inbox are deleted (ended-runs.ts); a redelivered job of
 * that child then loads nothing and is a no-op (`missing`).
 *
 * Where each part lives: this module runs a job (`advance`: one transition, then
 * the chain); load.ts is steps 1–2, plan.ts steps 3–4 (and the batch), effects.ts
 * what each effect writes, fenced-commit.ts step 5, follow-ups.ts step 6.
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
  /** Large frame inputs this process parsed (a worker has one; see payloads/frame-input.ts). */
  inputs?: InputCache;
  /** Where the spans a commit ends go (tracing/); none unless OTLP export is on. */
  spans?: SpanSink;
  /**
   * Calls a task a commit scheduled in this process (worker/engine-room.ts), with its claim
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
  advanceHere?: (run: string, seq: number, snapshot?: LoadSnapshot, keep?: boolean) => boolean;
  /** Other runs of `run`'s execution wait or advance in this process (worker/scheduler.ts). */
  siblingsHere?: (run: string) => boolean;
  /**
   * A stale job enqueues the follow-ups of its run's last commit again, in case
   * the process of that commit died before it did. `false` in a worker, queue
   * jobs and in-process advances alike (worker/engine-room.ts): follow-ups are advanced in
   * process there, so they would come back as queue jobs with nothing to do (a
   * Map parent's are thousands), and the schedule's leases cover that death.
   */
  ensureWhenStale?: boolean;
  /** Runs committed into a task call this process makes (a worker has one; held-runs.ts). */
  held?: HeldRuns;
  /**
   * An execution ended in a commit of this process (its ARN, and the result its
   * record now holds): `serve` tells its waiters (executions/waiters.ts `endedHere`).
   */
  onEnded?: (executionId: string, result: ExecutionResult) => void;
}

/** `paused`: the execution is paused; the run was parked with its events (executions/pause.ts). */
export type AdvanceResult = "committed" | "stale" | "idle" | "missing" | "paused";

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
   * `head`, the inbox head it just delivered as the only event (worker/task-jobs.ts: a
   * run this process holds at `seq` is stepped from there), or `snapshot`, the
   * run as a claim loaded it (worker/scheduler.ts). The commit's fences catch any change since.
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
      // Budget spent with events left: a run with siblings here (a Map's iteration, a
      // parent whose children commit here) goes back to this process's fires (the
      // scheduler runs it again once this advance ends: its execution's commits stay
      // in one process, commit-locks.ts); a lone one goes to the queue like any
      // follow-up, where any worker's free slot takes it.
      const siblings = run !== executionOf(run) || deps.siblingsHere?.(run) === true;
      if (!(siblings && deps.advanceHere?.(run, done.next.seq, undefined, true)))
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
  let loaded: Loaded | { result: AdvanceResult } | undefined = known;
  for (;;) {
    loaded ??= await load(deps, run, seq);
    if ("result" in loaded) return { result: loaded.result, steps: 1 };
    // The execution's turn (commit-locks.ts) is taken inside, for the plan and the send.
    const outcome = await stepAndCommit(deps, run, seq, loaded, steps > 1, steps);
    if (outcome === "reload") {
      loaded = undefined;
      continue;
    }
    // Enqueueing happens after the commit: it needs no fence.
    const queued = callHere(deps, outcome.ensure, outcome.claim, outcome.spawned, run);
    if (queued) await deps.queues.ensure(queued);
    const taken = outcome.steps ?? 1;
    return outcome.next
      ? { result: outcome.result, next: outcome.next, steps: taken }
      : { result: outcome.result, steps: taken };
  }
}
