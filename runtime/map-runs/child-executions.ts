import type { ChildSpec, Effect } from "../../engine/core/effects.js";
import type { RunEvent } from "../../engine/core/events.js";
import { isJsonObject, type Json } from "../../engine/core/json.js";
import type { ChildExecution, RunState } from "../../engine/core/run.js";
import { isoTime } from "../../engine/core/timestamp.js";
import { mapRunId } from "../../engine/states/map-io-resources.js";
import { isChildExecutionId } from "../../engine/states/map-child-executions.js";
import type { ExecutionSummary } from "../contract/index.js";
import { SUMMARY_READ, toSummary, type SummaryRow } from "../executions/execution-record.js";
import {
  byName,
  EXECUTION_FIELDS,
  storedFields,
  toStored,
  type ExecutionField,
} from "../store/fields.js";
import { EXECUTION_ARN_PREFIX, executionOf, longId, shortId } from "../store/ids.js";
import { LUA_KINDS, type Keys } from "../store/keys.js";
import type { CommitOp } from "../store/scripts/commit-transition.js";
import type { RedisClient } from "../store/redis.js";
import { SUMMARY_FIELDS } from "../executions/execution-record.js";
import { mapRunIndexKey, mapRunKey } from "./map-run-record.js";

/**
 * A Distributed Map's items run as child executions (engine/states/map-child-executions.ts):
 * each is still a child RUN of its parent's execution (its join, window, tolerance,
 * UpdateMapRun, stop and redrive work as for any child), but its history is its
 * own: the run hash names the child execution (`RUN.historyOwner`, set by the
 * spawn), and the commit appends its events to that execution's history list and
 * counts them in its record (`x:<child>`, `h:<child>`), never in the parent's.
 *
 * The record has the fields an execution's has (status, machine `<machine>/<label>`,
 * name, input, start, end, output or error) and `mapRun`, written by the commits of
 * the run's first and last steps (`childExecution` op); the Map Run lists its
 * children in `mrc:<map run id>` (by start time). Everything lives in the parent's
 * shard, so every commit stays single-slot; a lookup by a child's ARN finds that
 * shard by asking each for the record (`childShard`).
 */

/** The child execution's short id (`<machine>/<label>:<name>`): its keys' id. */
export function childShortId(child: ChildExecution): string {
  return shortId(child.arn);
}

/** The history owner a spawned child run is created with: a Map Run's child execution. */
export function spawnOwner(child: ChildSpec): { owner?: string } {
  return child.execution ? { owner: childShortId(child.execution) } : {};
}

/** A child execution as a Map Run's listing shows it. */
export type ChildExecutionSummary = ExecutionSummary & {
  mapRunArn?: string;
  itemCount?: number;
  /** Redriven with its parent (AWS's ExecutionListItem `redriveCount`, `redriveDate`). */
  redriveCount?: number;
  redrivenAt?: string;
};

/** A Map Run's list of child executions (short ids by start time, ms). */
export function mapRunChildrenKey(keys: Pick<Keys, "base">, id: string): string {
  return `${keys.base}${LUA_KINDS.mapRunChildren}${id}`;
}

function flat(fields: Partial<Record<ExecutionField, string | number>>): string[] {
  return Object.entries(toStored(EXECUTION_FIELDS, fields)).flat();
}

/**
 * The `childExecution` ops of one step of a Map Run's child: its record once it
 * started (the step on `Started`, which wrote ExecutionStarted), and its end.
 */
export function childExecutionOps(
  run: RunState,
  event: RunEvent,
  effects: readonly Effect[],
  keepSeconds: number,
): CommitOp[] {
  const child = run.childExecution;
  if (!child) return [];
  const ops: CommitOp[] = [];
  if (event.type === "Started" && run.lastEventId > 0) {
    const [machineAndLabel] = shortId(child.arn).split(":");
    const at = Date.parse(event.time);
    ops.push({
      op: "childExecution",
      fields: flat({
        status: "RUNNING",
        machine: machineAndLabel,
        name: child.name,
        input: JSON.stringify(event.input),
        startedAt: event.time,
        mapRun: child.mapRunArn,
        parentExecution: longId(executionOf(shortId(run.runId))),
        childRun: shortId(run.runId),
        itemCount: itemCountOf(child, event.input),
      }),
      mapRun: mapRunId(child.mapRunArn),
      at: Number.isFinite(at) ? at : 0,
    });
  }
  if (event.type === "Restored" && event.resume.redrive && run.status === "RUNNING") {
    // Redriven in place with its parent: it runs again, its end is to come.
    ops.push({
      op: "childExecution",
      fields: flat({
        status: "RUNNING",
        redriveCount: child.redriveCount ?? 1,
        redrivenAt: isoTime(Date.parse(event.time)),
      }),
      clear: storedFields(EXECUTION_FIELDS, ["stoppedAt", "error", "cause", "output"]),
      persist: true,
    });
  }
  const ended = effects.some((e) => e.type === "RunEnded" && e.runId === run.runId);
  // A child stopped before it started wrote nothing: it has no record to end.
  if (ended && run.lastEventId > 0) {
    const fields: Partial<Record<ExecutionField, string | number>> = {
      status: run.status,
      stoppedAt: isoTime(Date.parse(event.time)),
    };
    if (run.status === "SUCCEEDED") fields.output = JSON.stringify(run.output ?? null);
    else if (run.status === "FAILED") {
      if (run.error) fields.error = run.error;
      if (run.cause) fields.cause = run.cause;
    } else if (event.type === "Stop") {
      if (event.error) fields.error = event.error;
      if (event.cause) fields.cause = event.cause;
    }
    ops.push({
      op: "childExecution",
      fields: flat(fields),
      keepSeconds,
      clear: storedFields(
        EXECUTION_FIELDS,
        run.status === "SUCCEEDED" ? ["error", "cause"] : ["output"],
      ),
    });
  }
  return ops;
}

/**
 * How many items a child execution processes (AWS's `itemCount` in ListExecutions by
 * Map Run): one, or the `Items` of its batch.
 */
export function itemCountOf(child: ChildExecution, input: Json): number {
  if (!child.batched) return 1;
  const items = isJsonObject(input) ? input.Items : undefined;
  return Array.isArray(items) ? items.length : 0;
}

/** The child executions of a Map Run (its id), oldest first, as listings show them. */
export async function listChildExecutions(
  client: RedisClient,
  keys: Keys,
  mapRun: string,
): Promise<ChildExecutionSummary[]> {
  const ids = await client.redis.zrange(mapRunChildrenKey(keys, mapRun), "0", "-1");
  if (ids.length === 0) return [];
  const pipeline = client.redis.pipeline();
  const fields = [
    ...SUMMARY_READ,
    EXECUTION_FIELDS.mapRun,
    EXECUTION_FIELDS.itemCount,
    EXECUTION_FIELDS.redriveCount,
    EXECUTION_FIELDS.redrivenAt,
  ];
  for (const id of ids) pipeline.hmget(keys.execution(id), ...fields);
  const replies = (await pipeline.exec()) ?? [];
  const out: ChildExecutionSummary[] = [];
  for (const [err, values] of replies) {
    if (err || !Array.isArray(values)) continue;
    const row = byName(SUMMARY_FIELDS, values as (string | null)[]) as SummaryRow;
    if (row.name === null) continue;
    const summary: ChildExecutionSummary = toSummary(row);
    const [mapRunArn, itemCount, redriveCount, redrivenAt] = (values as (string | null)[]).slice(
      SUMMARY_READ.length,
    );
    if (mapRunArn) summary.mapRunArn = mapRunArn;
    if (itemCount) summary.itemCount = Number(itemCount);
    if (redriveCount) summary.redriveCount = Number(redriveCount);
    if (redrivenAt) summary.redrivenAt = redrivenAt;
    out.push(summary);
  }
  return out;
}

/**
 * The shard holding a child execution (short id): its parent's, which its id does
 * not tell (the shard of an execution is a hash of its own id), so each shard is
 * asked for its record; remembered, since a child never moves.
 */
export class ChildShards {
  private readonly known = new Map<string, number>();

  /** The room of a child execution (by ARN); undefined for any other id, or none found. */
  async roomOf<R extends { keys: Keys }>(
    client: RedisClient,
    rooms: readonly R[],
    executionId: string,
  ): Promise<R | undefined> {
    if (!executionId.startsWith(EXECUTION_ARN_PREFIX) || !isChildExecutionId(executionId)) {
      return undefined;
    }
    const keys = rooms.map((room) => room.keys);
    const shard = await this.shardOf(client, keys, shortId(executionId));
    return shard === undefined ? undefined : rooms[shard];
  }

  async shardOf(
    client: RedisClient,
    shards: readonly Keys[],
    short: string,
  ): Promise<number | undefined> {
    const hit = this.known.get(short);
    if (hit !== undefined) return hit;
    if (shards.length === 1) return 0;
    const pipeline = client.redis.pipeline();
    for (const keys of shards) pipeline.exists(keys.execution(short));
    const replies = (await pipeline.exec()) ?? [];
    const shard = replies.findIndex(([err, n]) => !err && n === 1);
    if (shard < 0) return undefined;
    if (this.known.size > 10_000) this.known.clear();
    this.known.set(short, shard);
    return shard;
  }
}

export { isChildExecutionId };

/**
 * The keys a purge of the execution `exec` (short id) erases besides its own
 * (executions/purge.ts): its Map Runs' records and lists, and each child
 * execution's record and history. None of them names anything else.
 */
export async function mapRunKeysOf(
  redis: RedisClient["redis"],
  keys: Keys,
  exec: string,
): Promise<string[]> {
  const index = mapRunIndexKey(keys, exec);
  const ids = await redis.zrange(index, "0", "-1");
  const out: string[] = [index];
  for (const id of ids) {
    const list = mapRunChildrenKey(keys, id);
    for (const child of await redis.zrange(list, "0", "-1")) {
      out.push(keys.execution(child), keys.history(child), keys.payloads(child));
    }
    out.push(list, mapRunKey(keys, id));
  }
  return out;
}
