import type { RunEvent } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import { forkPlan } from "../../engine/fork.js";
import type { step } from "../../engine/step.js";
import { pack } from "../store/codec.js";
import { RuntimeError, type Caller, type StartResult } from "../contract/index.js";
import type { CreatedRun } from "../store/scripts/start-execution.js";
import { executionArn, randomToken, shortId } from "../store/ids.js";
import { execOf } from "./execution-store.js";
import { roomOf, roomOfNew, type ExecutionRoom, type StartContext } from "./operations/context.js";

/**
 * Forking an execution (engine/fork.ts builds the fork from the source's journal):
 * the fork's first event and its other runs, ready for `ExecutionStore.start`, or
 * InvalidForkPoint naming the nearest event before that can be forked from.
 * The operation (operations/context.ts has its shape): `forkExecution`.
 */
export interface ForkStart {
  forked: Extract<ReturnType<typeof forkPlan>, { ok: true }>["root"];
  /** The runs created with the fork. */
  restored: CreatedRun[];
}

type Program = Parameters<typeof step>[0];
type Context = Parameters<typeof step>[1];

export function forkStart(
  program: Program,
  context: Context,
  journal: readonly { runId: string; event: RunEvent }[],
  history: readonly HistoryEvent[],
  fromEventId: number,
  input: Json | undefined,
  forkId: string,
): ForkStart {
  const plan = forkPlan(program, context, journal, history, fromEventId, input, forkId);
  if (!plan.ok) {
    // A few candidates only: each check is a replay.
    const nearest = history[fromEventId - 1]
      ? history
          .slice(0, fromEventId - 1)
          .reverse()
          .filter((h) => h.type.endsWith("StateEntered"))
          .slice(0, 10)
          .find((h) => forkPlan(program, context, journal, history, h.id, undefined, forkId).ok)
      : undefined;
    throw new RuntimeError(
      "InvalidForkPoint",
      `Cannot fork here: ${plan.reason}` +
        (nearest ? `; the nearest event before it that is: ${nearest.id}` : ""),
    );
  }
  return {
    forked: plan.root,
    restored: plan.restored.map(({ run, event }) => ({
      run: shortId(run.runId),
      state: pack(JSON.stringify(run)),
      event: JSON.stringify(event),
    })),
  };
}

/** A fork's name when none is given (as a start's): its runs' ids are made from it first. */
export function forkName(): string {
  return randomToken()
    .replace(/[^A-Za-z0-9]/g, "")
    .slice(0, 20);
}

/**
 * ForkExecution: a new execution on the source's version that takes up the source
 * where it entered the state of history event `fromEventId`, with that state's
 * input replaced by `input` if given. The source is not touched.
 */
export async function forkExecution(
  ctx: StartContext,
  executionId: string,
  options: { fromEventId: number; name?: string; input?: Json; caller?: Caller },
): Promise<StartResult> {
  const from = await roomOf(ctx, executionId);
  const source = await from.executions.describe(executionId);
  const { program, context } = await (await ctx.shards).cache.get(execOf(executionId));
  const journal = await from.executions.journal(executionId);
  const history = await historyUpTo(from, executionId, options.fromEventId);
  const name = options.name ?? forkName();
  const { forked, restored } = forkStart(
    program,
    context,
    journal,
    history,
    options.fromEventId,
    options.input,
    executionArn(source.stateMachine, name),
  );
  // The fork is an execution of its own, on its own name's shard.
  const to = await roomOfNew(ctx, source.stateMachine, name);
  const result = await to.executions.start(source.stateMachine, {
    input: source.input,
    pinned: { version: source.version },
    forked,
    restored,
    name,
    ...(options.caller ? { caller: options.caller } : {}),
  });
  return ctx.counted(result);
}

/** The source's history, read in pages until it holds event `eventId` (or ends). */
async function historyUpTo(
  room: ExecutionRoom,
  executionId: string,
  eventId: number,
): Promise<HistoryEvent[]> {
  const history: HistoryEvent[] = [];
  let cursor: string | undefined;
  do {
    const page = await room.executions.history(executionId, {
      limit: 1000,
      ...(cursor !== undefined ? { cursor } : {}),
    });
    history.push(...page.items);
    cursor = history.length < eventId ? page.nextCursor : undefined;
  } while (cursor !== undefined);
  return history;
}
