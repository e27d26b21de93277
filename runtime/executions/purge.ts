import type { RunEvent } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import { unpack } from "../store/codec.js";
import { RuntimeError } from "../contract/index.js";
import { machineOf, shortId } from "../store/ids.js";
import { EXECUTION_FIELDS } from "../store/fields.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";
import { purgeExecution as purgeScript } from "../store/scripts/purge-execution.js";
import { mapRunKeysOf } from "../map-runs/child-executions.js";
import { joinOfChunk } from "../../engine/states/map-express-chunk-ids.js";

/**
 * Purging an ended execution now, ahead of its retention: the right to erasure.
 *
 * Its keys are found from its own data, never by scanning the keyspace: the
 * journal names every run that ever took a step (the children of its Map and
 * Parallel states; each child of an ended execution has taken one, if only its
 * Stop), their joins follow from their ids, and the history names its approvals.
 * The children's keys go first, in batches; the purgeExecution script goes last
 * (journal included), so a purge that died half-way is finished by another.
 *
 * Left behind: task-token tombstones (keyed by a random token, holding only
 * "done"/"timedout", expiring within a day) and the deployment-wide counts.
 */
const BATCH = 2_000;

export async function purgeExecution(
  client: RedisClient,
  keys: Keys,
  executionId: string,
  exec: string,
): Promise<void> {
  const redis = client.redis;
  const st = await redis.hget(keys.execution(exec), EXECUTION_FIELDS.status);
  if (st === null) {
    throw new RuntimeError("ExecutionDoesNotExist", `Execution '${executionId}' does not exist`);
  }
  if (st === "RUNNING") throw running(executionId);

  const runs = new Set<string>();
  const joins = new Set<string>();
  for (let from = 0; ; from += BATCH) {
    const entries = await redis.lrangeBuffer(keys.journal(exec), from, from + BATCH - 1);
    for (const stored of entries) {
      const { runId, event } = JSON.parse(unpack(stored)) as { runId: string; event: RunEvent };
      const run = shortId(runId);
      if (run !== exec) runs.add(run);
      // An EXPRESS Map Run's join has no child runs: its chunks' answers name it.
      const chunkJoin = "taskId" in event ? joinOfChunk(event.taskId) : undefined;
      if (chunkJoin) joins.add(shortId(chunkJoin));
    }
    if (entries.length < BATCH) break;
  }
  // The failure log's claim (an hour) would outlive the execution it names.
  const children: string[] = [keys.failureLogged(exec)];
  for (const run of runs) {
    children.push(keys.run(run), keys.inbox(run), keys.parked(run));
    joins.add(run.slice(0, run.lastIndexOf("/")));
  }
  for (const join of joins) children.push(keys.joinResults(join), keys.joinInputs(join));
  // A Distributed Map's Map Runs and their child executions (records and histories).
  children.push(...(await mapRunKeysOf(redis, keys, exec)));
  for (let i = 0; i < children.length; i += BATCH) {
    await redis.unlink(...children.slice(i, i + BATCH));
  }

  const approvals: string[] = [];
  for (let from = 0; ; from += BATCH) {
    const entries = await redis.lrangeBuffer(keys.history(exec), from, from + BATCH - 1);
    for (const stored of entries) {
      const text = unpack(stored);
      if (!text.includes('"ApprovalRequested"')) continue;
      const event = JSON.parse(text) as HistoryEvent;
      const id = event.approvalRequestedEventDetails?.approvalId;
      if (event.type === "ApprovalRequested" && typeof id === "string") approvals.push(id);
    }
    if (entries.length < BATCH) break;
  }

  const reply = await client.call(
    purgeScript,
    {
      execution: keys.execution(exec),
      history: keys.history(exec),
      journal: keys.journal(exec),
      payloads: keys.payloads(exec),
      run: keys.run(exec),
      inbox: keys.inbox(exec),
      parked: keys.parked(exec),
      executions: keys.executions,
      executionsOf: keys.executionsOf(machineOf(exec)),
    },
    { base: keys.base, exec, approvals },
  );
  if (reply.kind === "running") throw running(executionId);
  if (reply.kind === "missing") {
    throw new RuntimeError("ExecutionDoesNotExist", `Execution '${executionId}' does not exist`);
  }
}

function running(executionId: string): RuntimeError {
  return new RuntimeError(
    "ExecutionRunning",
    `Execution '${executionId}' has not ended: stop it first, then purge it`,
  );
}
