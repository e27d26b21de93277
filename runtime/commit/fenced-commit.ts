import type { RunEventBody } from "../../engine/core/events.js";
import { pack } from "../store/codec.js";
import { executionOf } from "../store/ids.js";
import { stepJob } from "../store/job-ids.js";
import type { Keys } from "../store/keys.js";
import { commitTransition, type CommitReply } from "../store/scripts/commit-transition.js";
import { emitCommitSpans } from "../tracing/commit-spans.js";
import { writeMapRuns } from "../map-runs/map-run-record.js";
import { childShortId } from "../map-runs/child-executions.js";
import { crashPoint } from "../worker/crash.js";
import type { HistoryHead } from "./commit-locks.js";
import { closedJoin, dropRun, joinedChild } from "./ended-runs.js";
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

/** What one turn on a run came to; `steps`: how many steps the commit took in (batched). */
export type Outcome = {
  result: AdvanceResult;
  next?: Loaded;
  ensure?: string | null;
  steps?: number;
  /** The claim sent behind the commit for the task it adds (`claimAhead`). */
  claim?: AheadClaim;
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

/** Steps 3–5: stamp the head event, step, commit; again with new ids when a sibling wrote history first. */
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
  const startedMs = Number.isFinite(parsedStart) ? parsedStart : undefined;
  // The history the run writes: a Map Run's child execution has its own (map-runs/child-executions.ts).
  const owner = historyOwner(loaded.state, exec);
  let history = deps.locks ? deps.locks.historyHead(owner, loaded.history) : loaded.history;
  let batch = Math.max(1, Math.min(maxSteps, BATCH_STEPS));
  for (;;) {
    const plan = await planCommit(deps, run, {
      execution,
      state: loaded.state,
      body,
      apart: loaded.apart,
      history,
      seq,
      now: Date.now(),
      startedMs,
      maxSteps: batch,
    });
    const sent = await sendCommit(deps, run, seq, loaded.head, plan, history);
    const { reply } = sent;
    switch (reply.kind) {
      case "committed":
        return committed(deps, run, { ...sent, reply, loaded, plan, history, execution, mayChain });
      case "raced":
        history = { count: reply.historyCount, hash: reply.historyHead };
        deps.locks?.committed(owner, { count: history.count, hash: history.hash });
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
    alone: plan.steps.length > 1,
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
  // The child whose end this commit took in is needed no more (ended-runs.ts).
  const first = steps[0]!;
  const joined = joinedChild(first.event);
  if (joined) dropRun(client, keys, joined, closedJoin(first.event, first.result.run));
  const head =
    plan.history.length > 0
      ? { count: history.count + plan.history.length, hash: plan.chained.head }
      : { count: history.count, hash: history.hash };
  deps.locks?.committed(historyOwner(commit.loaded.state, exec), head);
  // Ended: no transition of it follows (a redrive loads it again), so its cache
  // entry goes now, while it is young, not 20,000 executions later (execution-cache.ts).
  if (plan.end) deps.executions.forget(exec);
  if (deps.spans) {
    for (const s of steps)
      emitCommitSpans(deps.spans, commit.execution, s.before, s.result.run, s.result.history);
  }
  const { seq: newSeq, fx, head: nextHead } = reply;
  // Waiting for a call this process may make: its result can step the run from here.
  if (!nextHead && deps.held && called !== undefined) {
    const state = last.result.run;
    deps.held.hold(run, { state, seq: newSeq, history: head, apart: stored.apart });
  }
  if (!commit.mayChain || !nextHead)
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
      history: head,
      apart: stored.apart,
    },
    ensure: fx
      .split(" ")
      .filter((f) => f !== selfJob)
      .join(" "),
  };
}
