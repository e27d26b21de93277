import type { Json } from "../../engine/core/json.js";
import { RuntimeError, type ExecutionRecord } from "../contract/index.js";
import type { ChildLink, ChildLinks } from "./child-links.js";
import {
  childAnswer,
  hasEnded,
  parentTaskAbortedCause,
  type ChildAnswer,
} from "./child-results.js";

/** What the watch needs of a runtime. */
export interface ChildRuntime {
  /** An execution's status alone (one field; null: no such execution): what each look reads. */
  statusOf(executionId: string): Promise<string | null>;
  /**
   * Whether the parent's task still waits on the link's token. A task that stopped
   * waiting (timed out, lost its heartbeat, stopped with a Parallel branch or its
   * execution) had its token withdrawn by the commit that ended it.
   */
  taskWaits(link: ChildLink): Promise<boolean>;
  describeExecution(executionId: string): Promise<ExecutionRecord>;
  stopExecution(
    executionId: string,
    options?: { error?: string; cause?: string },
  ): Promise<ExecutionRecord>;
  sendTaskSuccess(token: string, output: Json): Promise<void>;
  sendTaskFailure(token: string, error?: string, cause?: string): Promise<void>;
}

/**
 * One look at the parents that wait on children (`.sync`, `.sync:2`): a child that
 * ended answers its parent's token (its description, or `States.TaskFailed`); a
 * child whose parent's task no longer waits for it is stopped, as AWS stops what a
 * `.sync` task managed: the parent ended (stopped, failed, timed out), or only its
 * task did (`TimeoutSeconds`, `HeartbeatSeconds`, a failed Parallel sibling), the
 * parent running on through a Catch or a Retry. Each link is
 * removed once settled. Any number of workers may look at once: a token is
 * answered once (a second answer is refused and ignored), a stop of what has
 * ended changes nothing.
 */
export async function settleChildren(
  links: ChildLinks,
  runtime: () => ChildRuntime,
  onError: (err: unknown) => void,
): Promise<void> {
  if (!(await links.any())) return;
  const rt = runtime();
  for await (const [child, link] of links.waiting()) {
    try {
      await settle(rt, links, child, link);
    } catch (err) {
      onError(err);
    }
  }
}

async function settle(
  rt: ChildRuntime,
  links: ChildLinks,
  child: string,
  link: ChildLink,
): Promise<void> {
  const status = await rt.statusOf(child);
  if (status === null || hasEnded(status)) {
    // The whole record only once, to answer.
    const record = status === null ? undefined : await read(rt, child);
    const answer: ChildAnswer = record
      ? childAnswer(record, link.pattern)
      : {
          kind: "failure",
          error: "States.TaskFailed",
          cause: `Execution Does Not Exist: '${child}'`,
        };
    await answerParent(rt, link.token, answer);
    await links.unlink(child);
    return;
  }
  const parent = await rt.statusOf(link.parent);
  // The token is read only while the parent runs: an ended parent waits on nothing.
  if (parent !== null && !hasEnded(parent) && (await rt.taskWaits(link))) return;
  // The parent's task left while its `.sync` child ran: nothing will take the child's
  // end any more, so the child is stopped rather than left to run (and bill) on.
  try {
    await rt.stopExecution(child, { cause: parentTaskAbortedCause(link.parent) });
  } catch (err) {
    if (!(err instanceof RuntimeError)) throw err;
  }
  await links.unlink(child);
}

async function read(rt: ChildRuntime, id: string): Promise<ExecutionRecord | undefined> {
  try {
    return await rt.describeExecution(id);
  } catch (err) {
    if (err instanceof RuntimeError && err.code === "ExecutionDoesNotExist") return undefined;
    throw err;
  }
}

/** Answers the parent's token; a token no longer waiting (timed out, stopped, answered) is no error. */
async function answerParent(rt: ChildRuntime, token: string, answer: ChildAnswer): Promise<void> {
  try {
    if (answer.kind === "success") await rt.sendTaskSuccess(token, answer.output);
    else await rt.sendTaskFailure(token, answer.error, answer.cause);
  } catch (err) {
    if (!(err instanceof RuntimeError)) throw err;
    if (err.code === "States.DataLimitExceeded" && answer.kind === "success") {
      await answerParent(rt, token, {
        kind: "failure",
        error: "States.DataLimitExceeded",
        cause: err.message,
      });
    }
  }
}
