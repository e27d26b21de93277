import type { RunEvent, RunEventBody } from "../../engine/core/events.js";
import { redrivePlan, type RedrivePlan } from "../../engine/redrive.js";
import { pack } from "../store/codec.js";
import { EXECUTION_FIELDS } from "../store/fields.js";
import { executionTimeoutTimer, member, shortId } from "../store/ids.js";
import { stepJob } from "../store/job-ids.js";
import { RuntimeError, type Caller, type ExecutionRecord } from "../contract/index.js";
import { redriveExecution as redriveScript } from "../store/scripts/redrive-execution.js";
import type { CreatedRun } from "../store/scripts/start-execution.js";
import { execOf } from "./execution-store.js";
import { roomOf, type ExecutionRoom, type OperationContext } from "./operations/context.js";

/**
 * Whether an execution can be redriven now, as data (issue 42): the APIs report it
 * (AWS's DescribeExecution `redriveStatus`/`redriveStatusReason`) and
 * `checkRedrivable` refuses a redrive with the reason. FAILED, TIMED_OUT or ABORTED,
 * and ended within the redrive window (`REDRIVE_WINDOW_MS`, 14 days).
 */
export type Redrivability = { redrivable: true } | { redrivable: false; reason: string };

export function redrivability(
  record: Pick<ExecutionRecord, "executionId" | "status" | "stoppedAt">,
  now: number,
): Redrivability {
  if (!REDRIVABLE.has(record.status)) {
    return {
      redrivable: false,
      reason: `Execution '${record.executionId}' is ${record.status}: only FAILED, TIMED_OUT or ABORTED executions can be redriven`,
    };
  }
  if (record.stoppedAt && now - Date.parse(record.stoppedAt) > REDRIVE_WINDOW_MS) {
    return {
      redrivable: false,
      reason: `Execution '${record.executionId}' ended more than 14 days ago (${record.stoppedAt})`,
    };
  }
  return { redrivable: true };
}

/**
 * Redrive (AWS's RedriveExecution): a FAILED, TIMED_OUT or ABORTED execution
 * ended within the last 14 days runs again from the state it ended in, in the
 * same execution: its history goes on with ExecutionRedriven, its redrive count
 * goes up, and it keeps its variables and everything it did before.
 *
 * Which state, and with which input: the journal replayed through the pure `step`
 * gives the top level's frame before the step that ended it (engine/redrive.ts). A
 * Map or Parallel state runs again only the children that did not succeed, each
 * from the state it ended in, as AWS's does for inline Map and Parallel states.
 *
 * The operation (operations/context.ts has its shape): `redriveExecution`, which
 * commits the Redriven event with store/scripts/redrive-execution.ts.
 */
export const REDRIVE_WINDOW_MS = 14 * 24 * 3600 * 1000;
const REDRIVABLE = new Set(["FAILED", "TIMED_OUT", "ABORTED"]);

/** Refuses (ExecutionNotRedrivable, with `redrivability`'s reason) what cannot be redriven now. */
export function checkRedrivable(record: ExecutionRecord, now: number): void {
  const answer = redrivability(record, now);
  if (!answer.redrivable) throw new RuntimeError("ExecutionNotRedrivable", answer.reason);
}

/** Where the execution runs again (engine/redrive.ts); refused when it never entered a state. */
export function redriveFrom(
  program: Parameters<typeof redrivePlan>[0],
  context: Parameters<typeof redrivePlan>[1],
  journal: readonly { runId: string; event: RunEvent }[],
): RedrivePlan {
  const plan = redrivePlan(program, context, journal);
  if (!plan) {
    throw new RuntimeError(
      "ExecutionNotRedrivable",
      `Execution '${context.executionId}' ended before it entered any state`,
    );
  }
  return plan;
}

/** The runs a redrive creates (engine/redrive.ts), as `redriveExecution` takes them. */
export function restoredRuns(plan: RedrivePlan): CreatedRun[] {
  return plan.restored.map(({ run, event }) => ({
    run: shortId(run.runId),
    state: pack(JSON.stringify(run)),
    event: JSON.stringify(event),
    // A Map Run's child execution goes on writing its own history.
    ...(run.childExecution ? { owner: shortId(run.childExecution.arn) } : {}),
  }));
}

/**
 * The execution's TimeoutSeconds runs again from the redrive: AWS, "When you redrive
 * an execution, the state machine level timeout, if defined, is reset to 0." (The
 * execution's end disarmed its timer.)
 */
export function timeoutAgain(
  exec: string,
  timeoutSeconds: number | undefined,
): { member: string; at: number } | undefined {
  if (timeoutSeconds === undefined) return undefined;
  return {
    member: member.timer(executionTimeoutTimer(exec)),
    at: Date.now() + timeoutSeconds * 1000,
  };
}

/**
 * RedriveExecution: the execution runs again from where it ended; `clientToken`
 * makes a repeat harmless. Answers the record. The script is fenced by the
 * record's status and redrive count: a redrive that raced another is tried again.
 */
export async function redriveExecution(
  ctx: OperationContext,
  executionId: string,
  options: { clientToken?: string; caller?: Caller } = {},
): Promise<ExecutionRecord> {
  const exec = execOf(executionId);
  const room = await roomOf(ctx, executionId);
  const { executions, keys } = room;
  for (let attempt = 0; ; attempt++) {
    const record = await executions.describe(executionId);
    if (options.clientToken !== undefined && record.status === "RUNNING") {
      // A repeat of a redrive that went through answers as the first did.
      const token = await ctx.client.redis.hget(
        keys.execution(exec),
        EXECUTION_FIELDS.redriveToken,
      );
      if (token === options.clientToken) return record;
    }
    checkRedrivable(record, Date.now());
    const reply = await redriveOnce(ctx, room, record, options);
    if (reply.kind === "redriven") {
      await room.queues.ensure(stepJob(exec, reply.seq));
      return executions.describe(executionId);
    }
    if (reply.kind === "again") return executions.describe(executionId);
    if (reply.kind === "missing") {
      throw new RuntimeError("ExecutionDoesNotExist", `Execution '${executionId}' does not exist`);
    }
    if (attempt >= 5) throw new Error(`redrive of ${executionId} kept racing`);
  }
}

/** One try: the plan from the journal, committed by the script if nothing changed meanwhile. */
async function redriveOnce(
  ctx: OperationContext,
  { executions, keys }: ExecutionRoom,
  record: ExecutionRecord,
  options: { clientToken?: string; caller?: Caller },
) {
  const { executionId } = record;
  const exec = execOf(executionId);
  const { program, context } = await (await ctx.shards).cache.get(exec);
  const plan = redriveFrom(program, context, await executions.journal(executionId));
  return ctx.client.call(
    redriveScript,
    {
      execution: keys.execution(exec),
      run: keys.run(exec),
      inbox: keys.inbox(exec),
      history: keys.history(exec),
      journal: keys.journal(exec),
      schedule: keys.schedule,
      stats: keys.stats,
    },
    {
      base: keys.base,
      exec,
      event: JSON.stringify(redrivenEvent(plan, record, options.caller)),
      leaseUntil: Date.now() + ctx.settings.leaseMs,
      status: record.status,
      redriveCount: record.redriveCount ?? 0,
      clientToken: options.clientToken || undefined,
      now: new Date().toISOString(),
      timeout: timeoutAgain(exec, program.definition.TimeoutSeconds),
      runs: restoredRuns(plan),
    },
  );
}

/** The top level's Redriven event: the state it runs again from, with that state's input. */
function redrivenEvent(
  plan: RedrivePlan,
  record: ExecutionRecord,
  caller: Caller | undefined,
): RunEventBody {
  const point = plan.point;
  const event: RunEventBody = {
    type: "Redriven",
    state: point.state,
    input: point.input,
    redriveCount: (record.redriveCount ?? 0) + 1,
  };
  if (point.join) event.join = point.join;
  if (caller) event.caller = caller.name;
  return event;
}
