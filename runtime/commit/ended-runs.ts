import type { RunEvent } from "../../engine/core/events.js";
import type { RunState } from "../../engine/core/run.js";
import { shortId } from "../store/ids.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";

/**
 * A Map iteration or Parallel branch that ended leaves its run hash and inbox
 * (issue 21: they stayed until the retention TTL, the bulk of a wide Map's
 * keys). They are needed until the parent has taken the child's end in: the
 * child's last commit kept its output in the join's hash (`jr:`) and pushed
 * `ChildEnded`; the run hash still names the follow-up (`fx`) that wakes the
 * parent, in case the child's worker died before enqueueing it. Once the
 * parent has COMMITTED that `ChildEnded`, nothing reads the child again:
 *  - a redelivered job of the child finds no run and is a no-op (`missing`);
 *  - pushes, stops (`stopjoin` skips children in `jr:`), timers and leases
 *    check that the run exists and drop what is addressed to a missing one;
 *  - pending tasks, purge and redrive read the root run (kept until the
 *    execution's retention) and running children only.
 * So the parent's worker deletes them right after that commit. Not inside it:
 * the commit script is the one seam to the Lua side, and a crash in between
 * only leaves the keys to the TTL the child's last commit gave them.
 * Grandchildren went when their own parent took their ends in.
 *
 * The join's hash of outputs (`jr:`) goes with the parent's `collect`. A join
 * that never collects (its Map failed past its tolerance, the execution was
 * stopped) has children still ending after the parent moved on: each one's
 * last commit writes its output there again. So at every `ChildEnded` the
 * parent takes in while no longer waiting on that join, the hash goes too
 * (the last child's end leaves none).
 */
export function joinedChild(event: RunEvent): string | undefined {
  return event.type === "ChildEnded" ? shortId(event.childRunId) : undefined;
}

/** The join (short prefix) of the child this commit took in, when `run` no longer waits on it. */
export function closedJoin(event: RunEvent, run: RunState): string | undefined {
  if (event.type !== "ChildEnded") return undefined;
  const prefix = event.childRunId.slice(0, event.childRunId.lastIndexOf("/"));
  const phase = run.current?.phase;
  if (phase?.kind === "children" && phase.join.prefix === prefix) return undefined;
  if (phase?.kind === "collecting" && phase.prefix === prefix) return undefined;
  return shortId(prefix);
}

/**
 * Deletes an ended child's run hash and inbox. Not awaited by the transition:
 * it needs no answer, ioredis sends it in order on the same connection, and a
 * failure only leaves the keys to their TTL.
 */
export function dropRun(client: RedisClient, keys: Keys, run: string, join?: string): void {
  dropRuns(client, keys, [{ run, join }]);
}

/** `dropRun` of every child one commit took the end of (a batch of them, plan.ts): one UNLINK. */
export function dropRuns(
  client: RedisClient,
  keys: Keys,
  runs: readonly { run: string; join?: string | undefined }[],
): void {
  const gone: string[] = [];
  for (const { run, join } of runs) {
    gone.push(keys.run(run), keys.inbox(run));
    if (join !== undefined) gone.push(keys.joinResults(join));
  }
  if (gone.length > 0) client.redis.unlink(...gone).catch(() => {});
}
