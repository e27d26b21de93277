import type { StartOptions, StartResult } from "../../contract/index.js";
import { resolveTarget } from "../../definitions/start-target.js";
import { newExecutionName } from "../execution-store.js";
import { startExpressExecution } from "../express.js";
import { roomOfNew, type StartContext } from "./context.js";

/**
 * StartExecution. A STANDARD execution is stored on its name's shard and run by
 * the workers; an EXPRESS machine's runs in this process (../express.ts) and
 * answers at once, as AWS's StartExecution of an Express machine does.
 */
export async function startExecution(
  ctx: StartContext,
  stateMachine: string,
  options: StartOptions,
): Promise<StartResult> {
  // Read at most once a second per process, as EXPRESS starts do: AWS too lets starts
  // use the previous definition shortly after an update; this process's own updates
  // and deletes drop it at once (definitions-facade.ts).
  const meta = await ctx.recentMeta.get(stateMachine);
  if (meta.type === "EXPRESS") {
    // AWS: StartExecution of an Express machine answers at once; the execution runs
    // on (here, in this process) and nothing of it can be read back.
    const { executionId, startedAt } = await startExpressExecution(ctx, stateMachine, options);
    return ctx.counted({ executionId, startedAt, created: true });
  }
  const { pinned, version } = await resolveTarget(ctx, stateMachine, options, meta.latest);
  const { version: _v, alias: _a, budget: own, ...rest } = options;
  // The machine's budget, with the start's own limits over it field by field.
  const budget = meta.budget || own ? { ...meta.budget, ...own } : undefined;
  const name = rest.name ?? newExecutionName();
  const room = await roomOfNew(ctx, stateMachine, name);
  const result = await room.executions.start(stateMachine, {
    ...rest,
    name,
    ...(pinned ? { pinned } : {}),
    ...(budget ? { budget } : {}),
    ...(meta.roleArn !== undefined ? { roleArn: meta.roleArn } : {}),
    latest: version,
  });
  return ctx.counted(result);
}
