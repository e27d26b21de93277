import type { RunEventBody } from "../../engine/core/events.js";
import type { RunState } from "../../engine/core/run.js";
import type { ExecutionResult } from "../contract/index.js";
import { pack } from "../store/codec.js";
import { executionOf } from "../store/ids.js";
import { stepJob } from "../store/job-ids.js";
import type { Keys } from "../store/keys.js";
import {
  commitTransition,
  type CommitOp,
  type CommitReply,
} from "../store/scripts/commit-transition.js";
import type { LoadSnapshot } from "../store/scripts/load-transition.js";
import { fillTemplate } from "../store/event-template.js";
import { rememberInputs, takeInput } from "./kept-inputs.js";
import { emitCommitSpans } from "../tracing/commit-spans.js";
import { writeMapRuns } from "../map-runs/map-run-record.js";
import { childShortId } from "../map-runs/child-executions.js";
import { crashPoint } from "../worker/crash.js";
import type { HistoryHead } from "./commit-locks.js";
import { closedJoin, dropRuns, joinedChild } from "./ended-runs.js";
import type { LoadedExecution } from "./execution-cache.js";
import { calledTask, claimBehind, handOver, type AheadClaim } from "./follow-ups.js";
import type { Loaded } from "./load.js";
import { DROPPED, planCommit, type CommitPlan } from "./plan.js";
import type { AdvanceResult, TransitionDeps } from "./transition.js";

/**
 * Step 5 of the commit protocol (transition.ts): the one fenced commit of a
 * planned batch of steps (plan.ts), and what its reply means: committed (the
 * follow-ups, and the run's next transition when it may chain), raced (re-plan on
 * the history head a sibling moved), crowded (one step at a time), or a reason
 * to stop or to load again.
 */

/** Most steps one commit takes in (see "Batching" in the protocol, transition.ts). */
const BATCH_STEPS = 64;
/**
 * How many of the events queued behind its next inbox head a commit answers with, so
 * that the run's next transition can take them in one commit (plan.ts, "queued"):
 * a Map's parent takes its children's ends by the batch, not one commit each.
 */
const PEEK = BATCH_STEPS - 1;

/** What one turn on a run came to; `steps`: how many steps the commit took in (batched). */
export type Outcome = {
  result: AdvanceResult;
  next?: Loaded;
  ensure?: string | null;
  steps?: number;
  /** The claim sent behind the commit for the task it adds (`claimAhead`). */
  claim?: AheadClaim;
  /** The children the commit started, as it wrote them (`spawnedRuns`). */
  spawned?: ReadonlyMap<string, LoadSnapshot>;
};

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

/**
 * Steps 3–5: stamp the head event, step, commit; again with new ids when a sibling
 * wrote history first. The plan and the send take the execution's turn in this
 * process (commit-locks.ts), the reply is awaited after it: the commits of one
 * execution's runs go out pipelined, each planned on the head the one before leaves.
 */
export async function stepAndCommit(
  deps: TransitionDeps,
  run: string,
  seq: number,
  loaded: Loaded,
  mayChain: boolean,
  maxSteps: number,
): Promise<Outcome | "reload"> {
  const exec = executionOf(run);
  const execution = deps.executions.peek(exec) ?? (await deps.executions.get(exec));
  const body = JSON.parse(loaded.head) as RunEventBody;
  // The start as stored with the record (executions/execution-store.ts: its ISO text and its index score are one instant).
  const parsedStart = Date.parse(execution.context.startTime);
  const attempt: Attempt = {
    run,
    seq,
    loaded,
    execution,
    body,
    startedMs: Number.isFinite(parsedStart) ? parsedStart : undefined,
    // The history the run writes: a Map Run's child execution has its own (map-runs/child-executions.ts).
    owner: historyOwner(loaded.state, exec),
    known: loaded.history,
    batch: Math.max(1, Math.min(maxSteps, BATCH_STEPS)),
    // Events queued behind the head, taken in the same commit (plan.ts, "queued"); none after a crowd.
    queued: loaded.queued,
  };
  const { locks } = deps;
  for (;;) {
    const turn = () => planAndSend(deps, attempt);
    const { plan, history, sending, sentCommit } = locks
      ? await locks.run(exec, turn)
      : await turn();
    const settle = (outcome: "committed" | HistoryHead | undefined): void => {
      if (sentCommit) locks?.settled(attempt.owner, sentCommit, outcome);
    };
    let sent: Sent;
    try {
      sent = await sending;
    } catch (err) {
      settle(undefined);
      throw err;
    }
    const { reply } = sent;
    switch (reply.kind) {
      case "committed":
        settle("committed");
        return committed(deps, run, { ...sent, reply, loaded, plan, history, execution, mayChain });
      case "raced":
        attempt.known = { count: reply.historyCount, hash: reply.historyHead };
        settle(attempt.known);
        // Paused meanwhile (a chained transition has no load of its own to see it).
        if (reply.paused && body.type !== "Stop") return "reload";
        continue;
      case "crowded":
        settle(undefined);
        // Other events wait behind the head: they go first, as without batching.
        attempt.batch = 1;
        attempt.queued = undefined;
        continue;
      case "stale":
        settle(undefined);
        return { result: "stale", ensure: reply.fx };
      case "missing":
        settle(undefined);
        return { result: "missing" };
      case "headChanged":
        settle(undefined);
        // A stop went in front: load again.
        return "reload";
    }
  }
}

/** One try of `stepAndCommit`, and what a race or a crowd changes for the next. */
interface Attempt {
  run: string;
  seq: number;
  loaded: Loaded;
  execution: LoadedExecution;
  body: RunEventBody;
  startedMs: number | undefined;
  owner: string;
  known: HistoryHead;
  batch: number;
  queued: Loaded["queued"];
}

/**
 * Plans a commit on the history head this process knows it will find (the one the
 * commits it sent before leave) and sends it: queued now (store/redis.ts batches a
 * tick's calls), so the next turn's commit goes behind it.
 */
async function planAndSend(deps: TransitionDeps, a: Attempt) {
  const { locks } = deps;
  const history = locks ? locks.historyHead(a.owner, a.known) : a.known;
  const plan = await planCommit(deps, a.run, {
    execution: a.execution,
    state: a.loaded.state,
    body: a.body,
    queued: a.queued,
    apart: a.loaded.apart,
    history,
    seq: a.seq,
    now: Date.now(),
    startedMs: a.startedMs,
    maxSteps: a.batch,
  });
  const sending = sendCommit(deps, a.run, a.seq, a.loaded.head, plan, history);
  const after =
    plan.history.length > 0
      ? { count: history.count + plan.history.length, hash: plan.chained.head }
      : undefined;
  const sentCommit = locks?.sent(a.owner, after);
  return { plan, history, sending, sentCommit };
}

/** The end a commit wrote, as `?wait=` answers it (the record's fields: executions/execution-record.ts). */
function endResult(
  end: NonNullable<CommitPlan["end"]>,
  run: RunState,
  execution: LoadedExecution,
): ExecutionResult {
  const { executionId, startTime } = execution.context;
  const result: ExecutionResult = {
    executionId,
    startedAt: startTime,
    status: end.status as ExecutionResult["status"],
    stoppedAt: end.stoppedAt,
  };
  // As effects.ts `endOp` stores it: a success's output (null when none), else the error and cause.
  if (run.status === "SUCCEEDED") result.output = run.output ?? null;
  if (end.error) result.error = end.error;
  if (end.cause) result.cause = end.cause;
  return result;
}

/** Whose history a run writes (the key of its history head): its child execution's, or its execution's. */
function historyOwner(state: Loaded["state"], exec: string): string {
  return state.childExecution ? childShortId(state.childExecution) : exec;
}

/** What a commit sent: Redis's reply, and the task call it adds with the claim sent behind it. */
interface Sent {
  reply: CommitReply;
  called: string | undefined;
  claim: AheadClaim | undefined;
}

/**
 * The `commitTransition` script on the plan, fenced by seq, inbox head and history
 * head; the claim on the task it adds goes right behind it on the same connection.
 */
async function sendCommit(
  deps: TransitionDeps,
  run: string,
  seq: number,
  head: string,
  plan: CommitPlan,
  history: HistoryHead,
): Promise<Sent> {
  const { client, keys, settings } = deps;
  const { stored } = plan;
  crashPoint("beforeCommit", run !== executionOf(run), collects(plan));
  // A Distributed Map's Map Run record, ahead of the commit on the same connection (map-runs/).
  writeMapRuns(client, keys, run, plan.steps);
  const committing = client.call(commitTransition, commitKeys(keys, run), {
    base: keys.base,
    run,
    seq,
    head,
    // A batch of Continues must be the inbox's only event; one of queued events names them.
    alone: plan.steps.length > 1 && plan.taken.length === 0,
    ...(plan.taken.length > 0 ? { queued: plan.taken } : {}),
    peek: PEEK,
    state: stored === DROPPED ? "" : pack(stored.state),
    journal: plan.journal,
    payloads: plan.payloads.toArgs(),
    events: plan.chained.stored.map(pack),
    historyCount: history.count,
    historyHead: history.hash,
    newHistoryHead: plan.chained.head,
    now: plan.now,
    leaseMs: settings.leaseMs,
    tombstoneSeconds: settings.tombstoneTtlSeconds,
    ops: [...plan.ops, ...stored.ops],
  });
  const called = calledTask(plan.ops);
  const claim = claimBehind(deps, called);
  let reply: CommitReply;
  try {
    reply = await committing;
  } catch (err) {
    handOver(deps, claim);
    throw err;
  }
  if (reply.kind !== "committed") handOver(deps, claim);
  return { reply, called, claim };
}

/**
 * The children a commit started (a Map's iterations, a Parallel's branches), as it
 * wrote them: seq 0, the state, the Started event as the inbox's only one, on the
 * history head the commit left. A worker advancing them here (scheduler.ts `take`)
 * starts from this instead of loading each: a wide Map's loads were one script call
 * and one round trip per item. Nothing here is trusted: the child's commit is
 * fenced as any other (a stop pushed in front, a later head: it loads or re-steps).
 * A later child of a join (`spawnKept`) comes with the input this process kept for
 * it (kept-inputs.ts), when it did; not a Map Run's child execution (its history is
 * its own).
 */
function spawnedRuns(
  ops: readonly CommitOp[],
  head: HistoryHead,
): { spawned: Map<string, LoadSnapshot> } | undefined {
  let spawned: Map<string, LoadSnapshot> | undefined;
  for (const op of ops) {
    if (op.op === "keepInputs") rememberInputs(op.join, op.from, op.inputs);
    let started: string | undefined;
    if (op.op === "spawn" && op.owner === undefined) started = op.started;
    else if (op.op === "spawnKept" && op.owner === undefined) {
      const input = takeInput(op.join, op.index);
      if (input !== undefined) started = fillTemplate(op.started, input);
    }
    if (started === undefined || (op.op !== "spawn" && op.op !== "spawnKept")) continue;
    spawned ??= new Map();
    spawned.set(op.run, {
      state: op.state,
      seq: 0,
      head: started,
      historyCount: head.count,
      historyHead: head.hash,
      paused: false,
    });
  }
  return spawned && { spawned };
}

/** The plan's last step collects a join's results (a crash point of its own, worker/crash.ts). */
function collects(plan: CommitPlan): boolean {
  return plan.steps.at(-1)!.result.effects.some((e) => e.type === "CollectResults");
}

/** A committed plan: what it leaves this process (caches, spans, a held run) and what follows. */
function committed(
  deps: TransitionDeps,
  run: string,
  commit: Sent & {
    reply: Extract<CommitReply, { kind: "committed" }>;
    loaded: Loaded;
    plan: CommitPlan;
    history: HistoryHead;
    execution: LoadedExecution;
    mayChain: boolean;
  },
): Outcome {
  const { client, keys } = deps;
  const exec = executionOf(run);
  const { plan, reply, claim, called, history } = commit;
  const { steps, stored } = plan;
  const last = steps.at(-1)!;
  if (stored.apart !== commit.loaded.apart) deps.inputs?.set(run, stored.apart);
  crashPoint("afterCommit", run !== exec, collects(plan));
  // The children whose ends this commit took in are needed no more (ended-runs.ts).
  const joined: { run: string; join: string | undefined }[] = [];
  for (const s of steps) {
    const child = joinedChild(s.event);
    if (child) joined.push({ run: child, join: closedJoin(s.event, s.result.run) });
  }
  dropRuns(client, keys, joined);
  const head =
    plan.history.length > 0
      ? { count: history.count + plan.history.length, hash: plan.chained.head }
      : { count: history.count, hash: history.hash };
  // (The execution's turns planned on this head when the commit was sent: commit-locks.ts.)
  // Ended: no transition of it follows (a redrive loads it again), so its cache
  // entry goes now, while it is young, not 20,000 executions later (execution-cache.ts).
  if (plan.end) {
    deps.executions.forget(exec);
    deps.onEnded?.(
      commit.execution.context.executionId,
      endResult(plan.end, last.result.run, commit.execution),
    );
  }
  if (deps.spans) {
    for (const s of steps)
      emitCommitSpans(deps.spans, commit.execution, s.before, s.result.run, s.result.history);
  }
  const { seq: newSeq, fx, head: nextHead, queued } = reply;
  const spawned = spawnedRuns(plan.ops, head);
  // Waiting for a call this process may make: its result can step the run from here.
  if (!nextHead && deps.held && called !== undefined) {
    const state = last.result.run;
    deps.held.hold(run, { state, seq: newSeq, history: head, apart: stored.apart });
  }
  if (!commit.mayChain || !nextHead)
    return { result: "committed", ensure: fx, steps: steps.length, claim, ...spawned };
  // Every follow-up but this run's own next job: the chain takes that one.
  const selfJob = stepJob(run, newSeq);
  return {
    result: "committed",
    steps: steps.length,
    claim,
    ...spawned,
    next: {
      state: last.result.run,
      seq: newSeq,
      head: nextHead,
      ...(queued && queued.length > 0 ? { queued } : {}),
      history: head,
      apart: stored.apart,
    },
    ensure: fx
      .split(" ")
      .filter((f) => f !== selfJob)
      .join(" "),
  };
}
