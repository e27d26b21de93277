import type { Caller, StartResult } from "../../contract/index.js";
import { newExecutionName } from "../execution-store.js";
import { roomOf, roomOfNew, type StartContext } from "./context.js";

/**
 * RestartExecution: a new execution of the source's state machine version with
 * its input, linked to it (`restartedFrom`), on the new name's shard. The source,
 * running or ended, is not touched.
 */
export async function restartExecution(
  ctx: StartContext,
  executionId: string,
  options: { name?: string; caller?: Caller } = {},
): Promise<StartResult> {
  const source = await (await roomOf(ctx, executionId)).executions.describe(executionId);
  const name = options.name ?? newExecutionName();
  const to = await roomOfNew(ctx, source.stateMachine, name);
  const result = await to.executions.start(source.stateMachine, {
    input: source.input,
    name,
    pinned: { version: source.version },
    restartedFrom: source.executionId,
    // A fresh budget: the same limits, nothing spent yet.
    ...(source.budget ? { budget: source.budget } : {}),
    ...(options.caller ? { caller: options.caller } : {}),
  });
  return ctx.counted(result);
}
