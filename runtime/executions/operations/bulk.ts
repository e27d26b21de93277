import { randomBytes } from "node:crypto";
import {
  RuntimeError,
  type Caller,
  type ExecutionStatus,
  type ExecutionSummary,
  type Runtime,
} from "../../contract/index.js";
import { fromStored, OPERATION_FIELDS, toStored } from "../../store/fields.js";
import type { Keys } from "../../store/keys.js";
import type { Queue } from "bullmq";
import type { OperationJob } from "../../worker/queues.js";
import type { ExecutionListOptions } from "../execution-list.js";
import type { RedisClient } from "../../store/redis.js";

/**
 * Bulk operations for incident response: stop, pause, resume or purge every
 * execution of a filter, in the background, with progress readable while it runs
 * (`GET /v1/operations/:id`).
 *
 * The request and its progress live in the hash `op:<id>` (store/fields.ts
 * `OPERATION_FIELDS`); a job on the `operations` queue carries it out in a
 * worker, one page of the execution index at a time, saving its keyset cursor
 * and counts after each page. A worker that dies mid-way hands the job back
 * (BullMQ) and the next one goes on from the saved cursor; an execution of the
 * page it was on may be acted on twice, which every action tolerates (a second
 * stop is `skipped`). So an operation, like each of its actions, is safe to repeat.
 */
export const BULK_ACTIONS = ["stop", "pause", "resume", "purge"] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

/**
 * Which executions an operation acts on: the filters of `GET /v1/executions`
 * (execution-list.ts), so that what a listing shows is what a bulk action changes,
 * plus `endedBefore` for purges. Instants are ISO 8601 text, as the request sent them.
 */
export interface BulkFilter {
  stateMachine?: string;
  status?: ExecutionStatus;
  /** Only executions whose name starts with this (case-sensitive). */
  namePrefix?: string;
  /** Only executions that ended with this error name. */
  error?: string;
  /** Only executions started at or after this instant. */
  startedAfter?: string;
  /** Only executions started before this instant. */
  startedBefore?: string;
  /** Only executions that ended before this instant (purge). */
  endedBefore?: string;
}

/** Every field of a filter: each one narrows the executions it matches. */
export const FILTER_FIELDS = [
  "stateMachine",
  "status",
  "namePrefix",
  "error",
  "startedAfter",
  "startedBefore",
  "endedBefore",
] as const satisfies readonly (keyof BulkFilter)[];

/**
 * The listing a filter walks: every filter of `GET /v1/executions` is the list's
 * own (so its index reads, not a scan, do the narrowing); only `endedBefore` is
 * checked on each row (`endedBefore` below).
 */
export function listOptionsOf(filter: BulkFilter): ExecutionListOptions {
  const ms = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));
  const options: ExecutionListOptions = {};
  if (filter.stateMachine !== undefined) options.stateMachine = filter.stateMachine;
  if (filter.status !== undefined) options.status = filter.status;
  if (filter.namePrefix !== undefined) options.namePrefix = filter.namePrefix;
  if (filter.error !== undefined) options.error = filter.error;
  const after = ms(filter.startedAfter);
  const before = ms(filter.startedBefore);
  if (after !== undefined) options.startedAfter = after;
  if (before !== undefined) options.startedBefore = before;
  return options;
}

/** Whether a listed execution passes the filter's one check the listing cannot make. */
export function endedBefore(filter: BulkFilter, execution: ExecutionSummary): boolean {
  if (filter.endedBefore === undefined) return true;
  return (
    execution.stoppedAt !== undefined &&
    Date.parse(execution.stoppedAt) < Date.parse(filter.endedBefore)
  );
}

/**
 * What a bulk action is for, unless told otherwise: the executions it can change
 * (a stop or a pause the RUNNING ones, a resume the PAUSED ones; a purge what
 * `endedBefore` leaves).
 */
export function withDefaultStatus(action: BulkAction, filter: BulkFilter): BulkFilter {
  if (filter.status !== undefined || action === "purge") return filter;
  return { ...filter, status: action === "resume" ? "PAUSED" : "RUNNING" };
}

/** What an action passes on to each execution: a stop's error and cause, a pause's reason. */
export interface BulkOptions {
  error?: string;
  cause?: string;
  reason?: string;
}

export interface OperationRecord {
  operationId: string;
  action: BulkAction;
  filter: BulkFilter;
  status: "RUNNING" | "SUCCEEDED" | "FAILED";
  /** Executions the filter matched so far. */
  matched: number;
  /** Acted on. */
  done: number;
  /** Already in the state asked for (a stop of an ended execution…). */
  skipped: number;
  failed: number;
  /** The first failures, for a person to look at. */
  errors: { executionId: string; error: string; message: string }[];
  createdAt: string;
  finishedAt?: string;
  createdBy?: string;
}

const OPERATION_ID = /^op_[0-9a-f]{24}$/;
const PAGE = 100;
/** Executions acted on at once within a page. */
const PARALLEL = 10;
const MAX_ERRORS = 10;
/** Conflicts that mean "nothing to do here": counted as skipped, not failed. */
const SKIPPED: ReadonlySet<string> = new Set([
  "ExecutionNotRunning",
  "ExecutionNotPaused",
  "ExecutionRunning",
  "ExecutionDoesNotExist",
]);

export class OperationStore {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
    private readonly queue: Queue<OperationJob>,
    /** How long a finished operation's record is kept (seconds; 0 = forever). */
    private readonly keepSeconds: number,
  ) {}

  async start(
    action: BulkAction,
    filter: BulkFilter,
    options: BulkOptions,
    caller?: Caller,
  ): Promise<OperationRecord> {
    const id = `op_${randomBytes(12).toString("hex")}`;
    filter = withDefaultStatus(action, filter);
    const fields = toStored(OPERATION_FIELDS, {
      action,
      filter: JSON.stringify(filter),
      options: JSON.stringify(options),
      status: "RUNNING",
      matched: "0",
      done: "0",
      skipped: "0",
      failed: "0",
      errors: "[]",
      createdAt: new Date().toISOString(),
      createdBy: caller?.name,
    });
    await this.client.redis.hset(this.keys.operation(id), fields);
    await this.queue.add("op", { id }, { jobId: id, attempts: 5 });
    return this.get(id);
  }

  async get(id: string): Promise<OperationRecord> {
    const hash = OPERATION_ID.test(id)
      ? await this.client.redis.hgetall(this.keys.operation(id))
      : {};
    const f = fromStored(OPERATION_FIELDS, hash);
    if (!f.action)
      throw new RuntimeError("OperationDoesNotExist", `Operation '${id}' does not exist`);
    const record: OperationRecord = {
      operationId: id,
      action: f.action as BulkAction,
      filter: JSON.parse(f.filter ?? "{}") as BulkFilter,
      status: f.status as OperationRecord["status"],
      matched: Number(f.matched ?? 0),
      done: Number(f.done ?? 0),
      skipped: Number(f.skipped ?? 0),
      failed: Number(f.failed ?? 0),
      errors: JSON.parse(f.errors ?? "[]") as OperationRecord["errors"],
      createdAt: f.createdAt ?? "",
    };
    if (f.finishedAt) record.finishedAt = f.finishedAt;
    if (f.createdBy) record.createdBy = f.createdBy;
    return record;
  }

  /**
   * Carries the operation out, from where a previous attempt left it. `runtime`
   * does each action as the API would, with the operation's creator as the caller.
   */
  async run(id: string, runtime: Runtime): Promise<void> {
    const key = this.keys.operation(id);
    const redis = this.client.redis;
    const f = fromStored(OPERATION_FIELDS, await redis.hgetall(key));
    if (!f.action || f.status !== "RUNNING") return;
    const action = f.action as BulkAction;
    const filter = JSON.parse(f.filter ?? "{}") as BulkFilter;
    const options = JSON.parse(f.options ?? "{}") as BulkOptions;
    const caller: Caller | undefined = f.createdBy ? { name: f.createdBy } : undefined;
    const listing = listOptionsOf(filter);
    // Keyset cursor (newest first): a resumed attempt goes on after the last page it saved.
    let cursor: string | undefined = f.cursor;
    for (;;) {
      const page = await runtime.listExecutions({
        ...listing,
        ...(cursor !== undefined ? { cursor } : {}),
        limit: PAGE,
      });
      const matched = page.items.filter((e) => endedBefore(filter, e));
      const counts = { done: 0, skipped: 0, failed: 0 };
      const errors: OperationRecord["errors"] = [];
      for (let i = 0; i < matched.length; i += PARALLEL) {
        await Promise.all(
          matched.slice(i, i + PARALLEL).map(async (execution) => {
            try {
              await act(runtime, action, execution, options, caller);
              counts.done++;
            } catch (err) {
              if (err instanceof RuntimeError && SKIPPED.has(err.code)) {
                counts.skipped++;
                return;
              }
              counts.failed++;
              errors.push({
                executionId: execution.executionId,
                error: err instanceof RuntimeError ? err.code : "InternalError",
                message: err instanceof Error ? err.message : String(err),
              });
            }
          }),
        );
      }
      const progress = redis.multi();
      progress.hincrby(key, OPERATION_FIELDS.matched, matched.length);
      progress.hincrby(key, OPERATION_FIELDS.done, counts.done);
      progress.hincrby(key, OPERATION_FIELDS.skipped, counts.skipped);
      progress.hincrby(key, OPERATION_FIELDS.failed, counts.failed);
      if (page.nextCursor) progress.hset(key, OPERATION_FIELDS.cursor, page.nextCursor);
      await progress.exec();
      if (errors.length > 0) await this.keepErrors(key, errors);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    await this.finish(key, "SUCCEEDED");
  }

  /** The last attempt failed: the operation ends FAILED with what it did so far. */
  async fail(id: string, err: unknown): Promise<void> {
    const key = this.keys.operation(id);
    await this.keepErrors(key, [
      {
        executionId: "",
        error: "InternalError",
        message: err instanceof Error ? err.message : String(err),
      },
    ]);
    await this.finish(key, "FAILED");
  }

  private async keepErrors(key: string, errors: OperationRecord["errors"]): Promise<void> {
    const kept = JSON.parse(
      (await this.client.redis.hget(key, OPERATION_FIELDS.errors)) ?? "[]",
    ) as OperationRecord["errors"];
    if (kept.length >= MAX_ERRORS) return;
    await this.client.redis.hset(
      key,
      OPERATION_FIELDS.errors,
      JSON.stringify([...kept, ...errors].slice(0, MAX_ERRORS)),
    );
  }

  private async finish(key: string, status: "SUCCEEDED" | "FAILED"): Promise<void> {
    const done = this.client.redis
      .multi()
      .hset(key, toStored(OPERATION_FIELDS, { status, finishedAt: new Date().toISOString() }));
    if (this.keepSeconds > 0) done.expire(key, this.keepSeconds);
    await done.exec();
  }
}

function act(
  runtime: Runtime,
  action: BulkAction,
  execution: ExecutionSummary,
  options: BulkOptions,
  caller: Caller | undefined,
): Promise<unknown> {
  const id = execution.executionId;
  const by = caller ? { caller } : {};
  switch (action) {
    case "stop":
      return runtime.stopExecution(id, {
        ...(options.error !== undefined ? { error: options.error } : {}),
        ...(options.cause !== undefined ? { cause: options.cause } : {}),
        ...by,
      });
    case "pause":
      return runtime.pauseExecution(id, {
        ...(options.reason !== undefined ? { reason: options.reason } : {}),
        ...by,
      });
    case "resume":
      return runtime.resumeExecution(id, by);
    case "purge":
      return runtime.purgeExecution(id);
  }
}
