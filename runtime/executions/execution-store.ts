import { pack } from "../store/codec.js";
import type { RunEventBody } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import { newRun } from "../../engine/step.js";
import { DATA_LIMIT_BYTES } from "../../engine/step-context.js";
import { eventCheck, genesisHash } from "../audit/chain.js";
import { canonicalJson, decodeCursor, encodeCursor, inputDigest } from "../store/canonical.js";
import {
  EXECUTION_STATUSES,
  RuntimeError,
  type Caller,
  type ExecutionRecord,
  type ExecutionStatus,
  type ExecutionSummary,
  type Page,
  type StartResult,
} from "../contract/index.js";
import {
  executionArn,
  executionTimeoutTimer,
  isValidExecutionName,
  isValidMachinePart,
  isValidName,
  longId,
  member,
  randomToken,
  shortId,
  stateMachineArn,
} from "../store/ids.js";
import { stepJob } from "../store/job-ids.js";
import type { Keys } from "../store/keys.js";
import type { MachineStore } from "../definitions/machines.js";
import {
  PayloadBatch,
  readHistoryEntries,
  readJournalEntries,
  readRecordText,
} from "../payloads/history-payloads.js";
import { RECORD_FIELDS, type ExecutionCache } from "../commit/execution-cache.js";
import type { JobQueues } from "../worker/queues.js";
import type { RedisClient } from "../store/redis.js";
import { requestStop } from "../store/scripts/request-stop.js";
import { isChildExecutionId } from "../../engine/states/map-child-executions.js";
import { startExecution, type CreatedRun } from "../store/scripts/start-execution.js";
import type { LoadSnapshot } from "../store/scripts/load-transition.js";
import type { RuntimeSettings } from "../settings.js";
import { advance, type TransitionDeps } from "../commit/transition.js";
import type { ModelBudget } from "../../task-runners/model/budget.js";
import type { ExecutionTrace } from "../tracing/trace-context.js";
import { byName, EXECUTION_FIELDS, RUN_FIELDS } from "../store/fields.js";
import {
  firstEvent,
  matches,
  startRecord,
  SUMMARY_FIELDS,
  SUMMARY_READ,
  toRecord,
  toSummary,
} from "./execution-record.js";
import { ExecutionList, type ExecutionListOptions } from "./execution-list.js";

/** A name for a start that gives none: 20 random letters and digits. */
export function newExecutionName(): string {
  return randomToken()
    .replace(/[^A-Za-z0-9]/g, "")
    .slice(0, 20);
}

/** A start's instant: the given one (never later than now), else now. */
function startInstant(given: string | undefined, now: number): number {
  if (given === undefined) return now;
  const ms = Date.parse(given);
  if (!Number.isFinite(ms)) throw new TypeError(`startedAt '${given}' is not a date-time`);
  return Math.min(ms, now);
}

/** What a start may say besides the machine (`ExecutionStore.start`). */
export interface ExecutionStartOptions {
  input?: Json;
  name?: string;
  caller?: Caller;
  /**
   * The version (and alias) the start named: it runs that version, and the
   * record and ExecutionStarted say so; otherwise the latest version runs.
   */
  pinned?: { version: number; alias?: string };
  /** A restart: the execution it restarts, linked from the record and ExecutionStarted. */
  restartedFrom?: string;
  /** A fork (runtime/executions/fork.ts): its first event, in place of Started. */
  forked?: Extract<RunEventBody, { type: "Forked" }>;
  /** A fork's other runs, created with it (runtime/executions/fork.ts). */
  restored?: CreatedRun[];
  /** Limits on the model calls of this execution (runtime/commit/usage.ts). */
  budget?: ModelBudget;
  /** The state machine's role at the start (ExecutionStarted records it, as AWS does). */
  roleArn?: string;
  /** The caller's trace (its `traceparent`); without it the execution opens its own. */
  trace?: ExecutionTrace;
  /** When it counts as started, if not now (StartOptions.startedAt: a schedule's tick). */
  startedAt?: string;
  /** The latest version as the caller read it already (operations/start.ts): no second read. */
  latest?: number;
}

/**
 * Executions: start (idempotent by name), read, list, history, stop, wait.
 * The record is the hash `x:<machine>:<name>` (its fields: store/fields.ts
 * `EXECUTION_FIELDS`; decoded in execution-record.ts).
 */
export class ExecutionStore {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
    private readonly machines: MachineStore,
    private readonly queues: JobQueues,
    private readonly executions: ExecutionCache,
    private readonly settings: RuntimeSettings,
  ) {
    this.listing = new ExecutionList(client, keys);
  }

  private readonly listing: ExecutionList;

  /**
   * A worker of this shard in this process (`serve`): advances a new run in
   * process when it has room (worker/scheduler.ts `take`), from the snapshot the
   * start's script answered, so its first transition needs no load; false or
   * unset: queue it.
   */
  advanceHere: ((run: string, seq: number, snapshot?: LoadSnapshot) => boolean) | undefined;

  /** Starts `machine` (StartResult.created false: the same name and input started it before). */
  async start(machine: string, options: ExecutionStartOptions): Promise<StartResult> {
    const version =
      options.pinned?.version ?? options.latest ?? (await this.machines.latest(machine));
    const name = options.name ?? newExecutionName();
    // The API checks names against the same pattern first; this guards direct callers.
    if (!isValidExecutionName(name))
      throw new TypeError(`'${name}' is not a valid execution name (AWS's rule, see ids.ts)`);
    const input = options.input ?? {};
    const inputText = JSON.stringify(input);
    if (Buffer.byteLength(inputText) > DATA_LIMIT_BYTES) {
      throw new RuntimeError("States.DataLimitExceeded", "The execution input exceeds 256 KiB");
    }
    const program = await this.executions.program(machine, version);
    const arn = executionArn(machine, name);
    const genesis = await this.genesisOf(machine, version, arn);
    const exec = shortId(arn);
    const now = Date.now();
    // A given start (a schedule's tick) is the record's startedAt, its index score and
    // $$.Execution.StartTime; the lease and the execution timeout count from now.
    const startedMs = startInstant(options.startedAt, now);
    const timeout = program.definition.TimeoutSeconds;
    // The input is stored once (payloads/history-payloads.ts): ExecutionStarted and the journal refer to the same text.
    const payloads = new PayloadBatch();
    const storedInput = payloads.ref(inputText);
    const reply = await this.client.call(startExecution, this.startKeys(exec), {
      base: this.keys.base,
      exec,
      name,
      machine,
      version,
      input: storedInput,
      payloads: payloads.toArgs(),
      inputHash: inputDigest(canonicalJson(input)),
      startedAt: new Date(startedMs).toISOString(),
      startedMs,
      now,
      leaseMs: this.settings.leaseMs,
      state: pack(JSON.stringify(newRun(arn, ""))),
      started: JSON.stringify(firstEvent(machine, version, input, options)),
      timeout:
        timeout !== undefined
          ? { member: member.timer(executionTimeoutTimer(exec)), at: now + timeout * 1000 }
          : undefined,
      genesis,
      genesisCheck: eventCheck(genesis),
      record: startRecord(version, options),
      runs: options.restored,
      snapshot: this.advanceHere ? { recordFields: RECORD_FIELDS } : undefined,
    });
    if (reply.kind === "conflict") {
      throw new RuntimeError(
        "ExecutionAlreadyExists",
        `Execution '${name}' of '${machine}' already exists with another input`,
      );
    }
    const created = reply.kind === "created";
    // The start's script leased the run in the schedule, as a commit leases the runs it
    // wakes: a worker in this process takes it without the queue's three round trips,
    // and if this process dies first the lease runs out and a scheduler enqueues it.
    const loaded = reply.kind === "created" ? reply.loaded : undefined;
    const here = created && this.advanceHere?.(exec, 0, loaded) === true;
    if (created && !here) await this.queues.ensure(stepJob(exec, 0));
    return {
      executionId: arn,
      startedAt: reply.startedAt,
      created,
      ...(here ? { advancedHere: true } : {}),
    };
  }

  /** The hash chain's genesis (audit/chain.ts): the execution, its version and its definition. */
  private async genesisOf(machine: string, version: number, arn: string): Promise<string> {
    return genesisHash({
      executionArn: arn,
      stateMachineVersionArn: stateMachineArn(machine, version),
      definitionHash: await this.executions.definitionHash(machine, version),
    });
  }

  private startKeys(exec: string) {
    const { keys } = this;
    return {
      execution: keys.execution(exec),
      payloads: keys.payloads(exec),
      run: keys.run(exec),
      inbox: keys.inbox(exec),
      schedule: keys.schedule,
      stats: keys.stats,
    };
  }

  /** The status alone (null when there is no such execution): what waiters re-check. */
  async status(executionId: string): Promise<string | null> {
    const key = this.keys.execution(execOf(executionId));
    return this.client.redis.hget(key, EXECUTION_FIELDS.status);
  }

  async describe(executionId: string): Promise<ExecutionRecord> {
    const exec = execOf(executionId);
    const hash = await this.client.redis.hgetall(this.keys.execution(exec));
    if (!hash[EXECUTION_FIELDS.status]) throw notFound(executionId);
    // Stored once apart when large (payloads/history-payloads.ts): the record shows the text.
    for (const field of [EXECUTION_FIELDS.input, EXECUTION_FIELDS.output]) {
      const value = hash[field];
      if (value !== undefined)
        hash[field] = await readRecordText(this.client, this.keys, exec, value);
    }
    return toRecord(executionId, hash);
  }

  /** A page of executions, newest first (execution-list.ts). */
  list(options: ExecutionListOptions): Promise<Page<ExecutionSummary>> {
    return this.listing.page(options);
  }

  async history(
    executionId: string,
    options: { cursor?: string; limit?: number; reverse?: boolean },
  ): Promise<Page<HistoryEvent>> {
    const exec = execOf(executionId);
    const hc = await this.client.redis.hget(
      this.keys.execution(exec),
      EXECUTION_FIELDS.historyCount,
    );
    if (hc === null) throw notFound(executionId);
    const total = Number(hc);
    const limit = Math.max(1, Math.min(options.limit ?? 100, 1000));
    let start = options.reverse ? total - 1 : 0;
    if (options.cursor !== undefined) {
      const c = decodeCursor(options.cursor);
      if (!c || typeof c.i !== "number" || c.i < 0 || c.i >= total) {
        throw new RuntimeError("InvalidCursor", "The cursor is not valid");
      }
      start = c.i;
    }
    // Only the events counted are read: the list and the count change together in one script.
    const from = options.reverse ? Math.max(0, start - limit + 1) : start;
    const to = options.reverse ? start : Math.min(total - 1, start + limit - 1);
    const raw =
      total === 0 ? [] : await this.client.redis.lrangeBuffer(this.keys.history(exec), from, to);
    // The chain hash stays out of the AWS-shaped history (the audit export has it).
    const entries = await readHistoryEntries(this.client, this.keys, exec, raw);
    const items = entries.map((entry) => entry.event);
    if (options.reverse) items.reverse();
    const page: Page<HistoryEvent> = { items };
    const next = options.reverse ? from - 1 : to + 1;
    if (options.reverse ? next >= 0 : next < total) page.nextCursor = encodeCursor({ i: next });
    return page;
  }

  /** The execution's journal (`{runId, event}` in commit order), for deterministic replay. */
  async journal(
    executionId: string,
  ): Promise<{ runId: string; event: import("../../engine/core/events.js").RunEvent }[]> {
    const exec = execOf(executionId);
    const raw = await this.client.redis.lrangeBuffer(this.keys.journal(exec), 0, -1);
    return readJournalEntries(this.client, this.keys, exec, raw);
  }

  /**
   * Stop: the Stop event goes in FRONT of the root run's inbox and this process
   * commits it right away (same protocol as a worker's job), so the answer is the
   * ABORTED record. The step cancels timers and tasks and stops the children.
   */
  async stop(
    executionId: string,
    options: { error?: string; cause?: string; caller?: Caller },
    deps: TransitionDeps,
  ): Promise<ExecutionRecord> {
    const exec = execOf(executionId);
    const run = await this.runToStop(exec);
    const stop: RunEventBody = { type: "Stop", status: "ABORTED" };
    if (options.error !== undefined) stop.error = options.error;
    if (options.cause !== undefined) stop.cause = options.cause;
    if (options.caller) stop.caller = options.caller.name;
    const reply = await this.client.call(
      requestStop,
      {
        execution: this.keys.execution(exec),
        run: this.keys.run(run),
        inbox: this.keys.inbox(run),
        schedule: this.keys.schedule,
      },
      {
        base: this.keys.base,
        run,
        event: JSON.stringify(stop),
        leaseUntil: Date.now() + this.settings.leaseMs,
      },
    );
    if (reply.kind === "missing") throw notFound(executionId);
    if (reply.kind === "notRunning")
      throw new RuntimeError("ExecutionNotRunning", `Execution '${executionId}' is not running`);
    let seq = reply.seq;
    for (let i = 0; i < 50; i++) {
      const outcome = await advance(deps, run, seq);
      const record = await this.describe(executionId);
      if (record.status !== "RUNNING") return record;
      if (outcome === "committed" || outcome === "stale") {
        seq = Number(await this.client.redis.hget(this.keys.run(run), RUN_FIELDS.seq));
      }
    }
    // A worker is committing it concurrently; it will be ABORTED momentarily.
    return this.wait(executionId, 5_000);
  }

  /**
   * The run a stop goes to: an execution's root run, named as the execution; a Map
   * Run's child execution is a run of its parent's, which its record names. Stopped,
   * it ends ABORTED in its own history and its parent's Map counts it as a failed
   * item, as AWS counts a child "stopped by the user" (MapRunExecutionCounts.aborted).
   */
  private async runToStop(exec: string): Promise<string> {
    if (!isChildExecutionId(exec)) return exec;
    const [status, run] = await this.client.redis.hmget(
      this.keys.execution(exec),
      EXECUTION_FIELDS.status,
      EXECUTION_FIELDS.childRun,
    );
    if (run) return run;
    // No record (requestStop answers "missing"), or one that ended ("notRunning").
    if (status !== "RUNNING") return exec;
    // A child recorded before its run was: a Stop queued under its own name would reach no run.
    throw new RuntimeError(
      "InvalidRequest",
      `Execution '${longId(exec)}' is a Map Run's child that names no run: stop its parent execution`,
    );
  }

  async wait(executionId: string, timeoutMs: number): Promise<ExecutionRecord> {
    const deadline = Date.now() + timeoutMs;
    let delay = 10;
    for (;;) {
      const record = await this.describe(executionId);
      if (record.status !== "RUNNING" || Date.now() >= deadline) return record;
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(delay, Math.max(1, deadline - Date.now()))),
      );
      delay = Math.min(delay * 2, 200);
    }
  }
}

function notFound(executionId: string): RuntimeError {
  return new RuntimeError("ExecutionDoesNotExist", `Execution '${executionId}' does not exist`);
}

/** Short id of an execution ARN; anything else does not exist. */
export function execOf(executionId: string): string {
  let exec: string;
  try {
    exec = shortId(executionId);
  } catch {
    throw notFound(executionId);
  }
  const [machine, name, ...rest] = exec.split(":");
  if (
    rest.length > 0 ||
    !machine ||
    !name ||
    !isValidMachinePart(machine) ||
    !isValidExecutionName(name)
  )
    throw notFound(executionId);
  return exec;
}
