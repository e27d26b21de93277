import type { RunEventBody } from "../../engine/core/events.js";
import type { ShardLayout } from "../shards/shards.js";
import { longId, member } from "../store/ids.js";
import { defineScript } from "../store/lua/spec.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";
import { ChildShards, listChildExecutions } from "./child-executions.js";
import { liveCounts, mapRunIndexKey, mapRunKey, type MapRunFields } from "./map-run-record.js";
import { readRunState } from "./run-state.js";

/**
 * Reads and updates Map Runs (map-run-record.ts has the record) for the APIs:
 * ListMapRuns, DescribeMapRun, UpdateMapRun. A Map Run's ARN does not name its
 * execution, so a lookup by ARN asks every shard for `mr:<id>` (one HGETALL each).
 */
export interface MapRunRecord extends MapRunFields {
  id: string;
  /** The execution's ARN. */
  executionId: string;
}

export type MapRunUpdate = {
  maxConcurrency?: number;
  toleratedFailureCount?: number;
  toleratedFailurePercentage?: number;
};

export interface RequestMapRunUpdateArgs {
  event: string;
  run: string;
  now: number;
}

/**
 * requestMapRunUpdate: puts a MapRunUpdated event behind what the Map's run
 * has (it applies only while the Map waits for its children), and makes the run
 * due in the schedule, so a worker steps it at its next look.
 */
export const requestMapRunUpdate = defineScript<
  RequestMapRunUpdateArgs,
  { kind: "queued" } | { kind: "notRunning" }
>()({
  name: "requestMapRunUpdate",
  keys: ["execution", "run", "inbox", "schedule"],
  replies: ["queued", "notRunning"],
  lua: `
local st = redis.call('HGET', KEY.execution, EXEC.status)
if st ~= 'RUNNING' and st ~= 'PAUSED' then return reply('notRunning') end
if redis.call('EXISTS', KEY.run) == 0 then return reply('notRunning') end
redis.call('RPUSH', KEY.inbox, ARG.event)
local due = redis.call('ZSCORE', KEY.schedule, MEMBER.run .. ARG.run)
if not due or tonumber(due) > ARG.now then
  redis.call('ZADD', KEY.schedule, ARG.now, MEMBER.run .. ARG.run)
end
return reply('queued')
`,
});

const NUMBERS = [
  "total",
  "started",
  "succeeded",
  "failed",
  "aborted",
  "maxConcurrency",
  "toleratedFailureCount",
  "toleratedFailurePercentage",
  "redriveCount",
] as const;

export class MapRunStore {
  constructor(
    private readonly client: RedisClient,
    private readonly layout: ShardLayout,
  ) {}

  /** The execution's Map Runs (short id), oldest first. */
  async list(execution: string): Promise<MapRunRecord[]> {
    const keys = this.layout.keysOf(execution);
    const ids = await this.client.redis.zrange(mapRunIndexKey(keys, execution), "0", "-1");
    const records = await Promise.all(ids.map((id) => this.read(keys, id)));
    return records.filter((r): r is MapRunRecord => r !== undefined);
  }

  /** The Map Run of this id (the last part of its ARN), in whichever shard holds it. */
  async describe(id: string): Promise<MapRunRecord | undefined> {
    for (const keys of this.layout.shards) {
      const record = await this.read(keys, id);
      if (record) return record;
    }
    return undefined;
  }

  /** The Map Run's child executions (child-executions.ts), oldest first. */
  children(record: MapRunRecord): ReturnType<typeof listChildExecutions> {
    return listChildExecutions(this.client, this.layout.keysOf(record.execution), record.id);
  }

  /** Delivers the update to the Map's run; `notRunning` once its Map Run has ended. */
  async update(record: MapRunRecord, update: MapRunUpdate): Promise<"queued" | "notRunning"> {
    if (record.status !== "RUNNING") return "notRunning";
    const keys = this.layout.keysOf(record.execution);
    const event: RunEventBody = { type: "MapRunUpdated", mapRunArn: record.arn, ...update };
    const reply = await this.client.call(
      requestMapRunUpdate,
      {
        execution: keys.execution(record.execution),
        run: keys.run(record.run),
        inbox: keys.inbox(record.run),
        schedule: keys.schedule,
      },
      { event: JSON.stringify(event), run: record.run, now: Date.now() },
    );
    // Ahead of the step that applies it: what DescribeMapRun answers from now on.
    if (reply.kind === "queued") {
      const fields: string[] = [];
      for (const [k, v] of Object.entries(update)) if (v !== undefined) fields.push(k, String(v));
      if (fields.length > 0) await this.client.redis.hset(mapRunKey(keys, record.id), ...fields);
    }
    return reply.kind;
  }

  /**
   * The record, with the counters of a running Map Run taken from its run's state
   * (map-run-record.ts writes them to the record only at its milestones). The run is
   * read after the record, so it is at least as new: if it no longer waits on the Map
   * Run, the Map Run ended meanwhile, and its record, written ahead of that commit,
   * says so when read again.
   */
  private async read(keys: Keys, id: string): Promise<MapRunRecord | undefined> {
    const redis = this.client.redis;
    let raw = await redis.hgetall(mapRunKey(keys, id));
    // The Map Run record's own field names (map-run-record.ts), not an approval's.
    const { status, run, arn } = raw as Partial<Pick<MapRunRecord, "status" | "run" | "arn">>;
    if (status === "RUNNING" && run && arn) {
      const state = await readRunState(redis, keys, run);
      const live = state && liveCounts(state, arn);
      if (live) for (const [k, v] of Object.entries(live)) raw[k] = String(v);
      // Not opened yet (its ItemReader reads: the record's counters are the ones), or over.
      else raw = await redis.hgetall(mapRunKey(keys, id));
    }
    if (!raw.arn || !raw.execution) return undefined;
    const record = { ...raw, id, executionId: longId(raw.execution) } as unknown as MapRunRecord;
    const numeric = record as unknown as Record<string, number | "">;
    for (const field of NUMBERS) {
      const text = raw[field];
      numeric[field] =
        text === undefined || text === "" ? (field.startsWith("tolerated") ? "" : 0) : Number(text);
    }
    return record;
  }
}

/**
 * A runtime's Map Runs (`RedisRuntime.mapRuns`): the store, opened on first use
 * with the deployment's shard layout.
 */
export class MapRuns {
  private store: Promise<MapRunStore> | undefined;

  constructor(
    private readonly client: RedisClient,
    private readonly layout: () => Promise<ShardLayout>,
  ) {}

  list(execution: string): Promise<MapRunRecord[]> {
    return this.open().then((store) => store.list(execution));
  }

  describe(id: string): Promise<MapRunRecord | undefined> {
    return this.open().then((store) => store.describe(id));
  }

  update(record: MapRunRecord, update: MapRunUpdate): Promise<"queued" | "notRunning"> {
    return this.open().then((store) => store.update(record, update));
  }

  children(record: MapRunRecord): ReturnType<typeof listChildExecutions> {
    return this.open().then((store) => store.children(record));
  }

  /**
   * The room (of `rooms`, one per shard) of a Map Run's child execution, by ARN: its
   * parent's shard, which its id does not tell; undefined for any other execution.
   */
  childRoom<R extends { keys: Keys }>(rooms: readonly R[], executionId: string) {
    return this.childShards.roomOf(this.client, rooms, executionId);
  }

  private readonly childShards = new ChildShards();

  private open(): Promise<MapRunStore> {
    this.store ??= this.layout().then(
      (layout) => new MapRunStore(this.client, layout),
      (err: unknown) => {
        this.store = undefined;
        throw err;
      },
    );
    return this.store;
  }
}
