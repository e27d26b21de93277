/**
 * Every Redis key and BullMQ name the runtime uses, built here and nowhere else.
 *
 * Layout: `<prefix>:{<tag>}:<kind>:<id>`, one hash tag per shard (shards.ts).
 * Executions are spread over a fixed number of shards; everything of one
 * execution (record, history, journal, runs, inboxes, joins, tasks, tokens,
 * timers, its status-index entries) and the shard's own BullMQ queues share its
 * shard's tag, so every multi-key Lua script touches ONE Redis Cluster slot (no
 * CROSSSLOT). What is not an execution's (state machines, versions, aliases,
 * tags, activity definitions, bulk operations, the audit key, the storage
 * version and the shard count) lives under the control tag `{sw}`, which no
 * script touches.
 *
 * A deployment of one shard uses `{sw}` for both: exactly the single-tag layout
 * of before shards, so such a deployment keeps working unchanged (shards.ts).
 *
 * Lua scripts receive the key prefix (`base`) and build the keys of other runs
 * themselves (a commit touches its parent's or its children's inboxes, known only
 * at run time), from the kinds of `LUA_KINDS` and nothing else.
 *
 * Ids inside keys are "short ids": the execution ARN without its constant prefix
 * (`<machine>:<name>`), plus a child run's suffix (`/3/0`). See `ids.ts`.
 */
export interface Keys {
  /** The shard these keys are of (0 … count − 1). */
  shard: number;
  /**
   * What the task tokens this shard issues start with (`s<shard>-`; nothing with
   * one shard): a callback finds its shard from the token alone (shards.ts).
   */
  tokenPrefix: string;
  /** `<prefix>:{<shard tag>}:`: every key of the shard starts with it (Lua builds run keys from it). */
  base: string;
  /** Prefix handed to BullMQ (its keys become `<prefix>:{<shard tag>}:<queue>:…`). */
  bullPrefix: string;
  /** Hash: `latest` version number, `createdAt` of version 1. */
  machine(name: string): string;
  /** Hash: `hash`, `createdAt`, `def` (JSON) of one version. */
  machineVersion(name: string, version: number): string;
  /** Sorted set of state machine names (score 0, lexicographic). */
  machines: string;
  /** Sorted set of a state machine's published versions (score = member = version number). */
  publishedVersions(name: string): string;
  /** Hash: alias name → alias record (JSON: description, routing, createdAt, updatedAt). */
  aliases(name: string): string;
  /** Hash: tag key → value, of a state machine (`sm:<name>`) or an activity (`act:<name>`). */
  tags(resource: string): string;
  /** Hash: activity name → creation time (ISO): the activities created through the API. */
  activities: string;
  /** Hash: the execution record (see `executions/execution-store.ts`), `hc` = history events so far. */
  execution(exec: string): string;
  /** Sorted set of every execution by start time (ms). */
  executions: string;
  /** Sorted set of one state machine's executions by start time (ms). */
  executionsOf(machine: string): string;
  /**
   * Sorted set of the executions with one status (all machines, or one machine's)
   * by start time (ms): a status-filtered listing reads a page of it, never the
   * whole store. Kept by the scripts that change a status (start, end).
   */
  executionsByStatus(status: string, machine?: string): string;
  /** String: set once every execution stored before the status indexes is in them. */
  statusIndexBuilt: string;
  /** List: history events (JSON), index i holds event id i + 1. */
  history(exec: string): string;
  /** List: every `{runId, event}` fed to `step`, in commit order (deterministic replay). */
  journal(exec: string): string;
  /** The claim of the process that logs an execution's failed end (failure-log.ts). */
  failureLogged(exec: string): string;
  /** Hash: SHA-256 hex → a JSON text the execution stores once and refers to (payloads/history-payloads.ts). */
  payloads(exec: string): string;
  /** Hash: `s` run state (JSON), `q` seq, `fx` follow-ups of the last commit. */
  run(run: string): string;
  /** Set of the runs of a paused execution that have events waiting (store/scripts/pause-execution.ts). */
  parked(exec: string): string;
  /** List: events waiting for the run (bodies without time/eventId). */
  inbox(run: string): string;
  /** Sorted set of due times: timers (`t:`), run leases (`r:`), task leases (`k:`). */
  schedule: string;
  /** Hash: task id (short) → task record (JSON). */
  tasks: string;
  /**
   * Hash: executions running now (`RUNNING`), ended so far by final status, and
   * `timers` armed (the schedule's `t:` members), kept by the scripts that change them.
   */
  stats: string;
  /** Hash: task token → task id (short). */
  tokens: string;
  /**
   * Hash: the ends of a Map's or Parallel's children (`join` = the join prefix, short),
   * child index → its output JSON (`null` unless it succeeded). Written by each
   * child's last commit, read and deleted by the parent's `collect`.
   */
  joinResults(join: string): string;
  /** Hash: the inputs of a join's children not started yet (child index → input JSON). */
  joinInputs(join: string): string;
  /** String with a TTL: the worker calling a pending task now (store/scripts/task-call-claim.ts). */
  taskClaim(task: string): string;
  /** String with a TTL: why a token no longer answers (`done` / `timedout`). */
  tombstone(token: string): string;
  /** List of task ids (short) waiting for an activity worker. */
  activity(name: string): string;
  /** Hash: a bulk operation's request and progress (runtime/executions/operations/bulk.ts). */
  operation(id: string): string;
  /** Pub/sub channel: an execution ended (message: short id). */
  endedChannel: string;
  /** Pub/sub channel: an execution ended other than SUCCEEDED (message: short id; worker/failure-log.ts). */
  failedChannel: string;
  /** Pub/sub channel: a task joined an activity's list (message: the activity's name). */
  activityChannel: string;
  /** Hash: an approval record (runtime/approvals/approval-record.ts lists its fields). */
  approval(id: string): string;
  /**
   * Sorted set of approval ids by creation time (ms): the inbox index for one
   * status, approver group and state machine, each `*` for any. The scripts that
   * change a record's status move it between these (store/lua/approval.ts).
   */
  approvalIndex(status: string, group: string, machine: string): string;
  /** Stream: approval events waiting for the webhook (created, decided, expired, cancelled). */
  approvalEvents: string;
  /**
   * Stream, capped at about `APPROVAL_FEED_LENGTH` entries: every approval change
   * (`{e: event, id}`), always written, read by `GET /v1/approvals/events`; its entry
   * ids are the SSE event ids, so a client resumes where it left off.
   */
  approvalFeed: string;
  /**
   * String: the Ed25519 private key (PKCS#8 PEM) that signs audit exports when
   * STEPWISE_AUDIT_KEY names none; generated on first use (runtime/audit/signing.ts).
   */
  auditKey: string;
  /** String: the storage format of this prefix's data (storage-version.ts). */
  storageVersion: string;
  /** String: the deployment's shard count, fixed when it was created (shards.ts). */
  shardCount: string;
}

/** How many approval changes the feed keeps for clients resuming with Last-Event-ID. */
export const APPROVAL_FEED_LENGTH = 10_000;

/**
 * The kinds of key Lua builds itself (from `base`), injected into every script
 * as `KIND` (store/lua/prelude.ts): the builders below and the scripts spell them
 * from this one table.
 */
export const LUA_KINDS = {
  execution: "x:",
  executions: "xs",
  executionsOf: "xs:",
  stats: "stats",
  ended: "ended",
  failed: "failed",
  run: "r:",
  inbox: "i:",
  tombstone: "tomb:",
  activity: "act:",
  activityReady: "actready",
  joinResults: "jr:",
  joinInputs: "ji:",
  statusIndex: "xst:",
  approval: "ap:",
  approvalIndex: "apx:",
  approvalEvents: "apev",
  approvalFeed: "apfeed",
  parked: "pz:",
  payloads: "p:",
  taskClaim: "kc:",
  history: "h:",
  /** Sorted set of a Map Run's child executions (short ids) by start time (map-runs/child-executions.ts). */
  mapRunChildren: "mrc:",
} as const;

/** BullMQ queue names (no `:` allowed by BullMQ). */
export const QUEUES = { steps: "steps", tasks: "tasks", operations: "operations" } as const;

/**
 * The keys of shard `shard` of a deployment of `count` shards. Shard `i` of
 * several has the tag `{sw:i}`; the control keys of every shard's `Keys` point at
 * `{sw}`, so stores that read a state machine beside an execution need one `Keys`.
 */
export function makeKeys(prefix = "stepwise", shard = 0, count = 1): Keys {
  if (!/^[A-Za-z0-9_.-]+$/.test(prefix)) throw new Error(`invalid key prefix '${prefix}'`);
  if (!Number.isInteger(shard) || shard < 0 || shard >= count)
    throw new Error(`shard ${shard} is not one of ${count}`);
  const control = `${prefix}:{sw}:`;
  const tag = count === 1 ? "{sw}" : `{sw:${shard}}`;
  const base = `${prefix}:${tag}:`;
  return {
    shard,
    tokenPrefix: count === 1 ? "" : `s${shard}-`,
    base,
    bullPrefix: `${prefix}:${tag}`,
    machine: (name) => `${control}sm:${name}`,
    machineVersion: (name, version) => `${control}smv:${name}:${version}`,
    machines: `${control}sms`,
    publishedVersions: (name) => `${control}smpv:${name}`,
    aliases: (name) => `${control}sma:${name}`,
    tags: (resource) => `${control}tag:${resource}`,
    activities: `${control}acts`,
    execution: (exec) => `${base}${LUA_KINDS.execution}${exec}`,
    executions: `${base}${LUA_KINDS.executions}`,
    executionsOf: (machine) => `${base}${LUA_KINDS.executionsOf}${machine}`,
    statusIndexBuilt: `${base}xst-built`,
    executionsByStatus: (status, machine) =>
      `${base}${LUA_KINDS.statusIndex}${status}${machine !== undefined ? `:${machine}` : ""}`,
    history: (exec) => `${base}${LUA_KINDS.history}${exec}`,
    journal: (exec) => `${base}j:${exec}`,
    failureLogged: (exec) => `${base}failure-logged:${exec}`,
    payloads: (exec) => `${base}${LUA_KINDS.payloads}${exec}`,
    run: (run) => `${base}${LUA_KINDS.run}${run}`,
    inbox: (run) => `${base}${LUA_KINDS.inbox}${run}`,
    parked: (exec) => `${base}${LUA_KINDS.parked}${exec}`,
    schedule: `${base}sched`,
    tasks: `${base}tasks`,
    stats: `${base}${LUA_KINDS.stats}`,
    tokens: `${base}tok`,
    joinResults: (join) => `${base}${LUA_KINDS.joinResults}${join}`,
    joinInputs: (join) => `${base}${LUA_KINDS.joinInputs}${join}`,
    taskClaim: (task) => `${base}${LUA_KINDS.taskClaim}${task}`,
    tombstone: (token) => `${base}${LUA_KINDS.tombstone}${token}`,
    activity: (name) => `${base}${LUA_KINDS.activity}${name}`,
    endedChannel: `${base}${LUA_KINDS.ended}`,
    failedChannel: `${base}${LUA_KINDS.failed}`,
    activityChannel: `${base}${LUA_KINDS.activityReady}`,
    operation: (id) => `${control}op:${id}`,
    approval: (id) => `${base}${LUA_KINDS.approval}${id}`,
    approvalIndex: (status, group, machine) =>
      `${base}${LUA_KINDS.approvalIndex}${status}|${group}|${machine}`,
    approvalEvents: `${base}${LUA_KINDS.approvalEvents}`,
    approvalFeed: `${base}${LUA_KINDS.approvalFeed}`,
    auditKey: `${control}audit-key`,
    storageVersion: `${control}storage-version`,
    shardCount: `${control}shards`,
  };
}
