/**
 * The field names of every Redis hash with fixed fields, named here and nowhere
 * else: one table per kind of hash, a descriptive name → the stored name. The
 * stored names are short because every parked execution pays for them, and they
 * are part of the stored format (storage-version.ts): renaming one would misread
 * every hash stored with it, so a name here may change, a stored name may not.
 *
 * TypeScript reads and writes through these tables (`storedFields`, `toStored`,
 * `fromStored`, `byName` below); every script gets them injected by the prelude
 * (store/lua/prelude.ts: `EXEC`, `RUN`, `APPROVAL`, `STATS`, `MACHINE`,
 * `VERSION`, `OPERATION`) and reads a hash by name with `hmgetNamed`. test/runtime/field-names.test.ts fails on a
 * stored name spelled anywhere else in runtime/.
 *
 * Hashes whose fields are data, not names (tasks, tokens, payloads, join results
 * and inputs, aliases, tags, activities), have no table.
 */

/** The execution record, `x:<exec>` (executions/execution-store.ts, executions/execution-record.ts). */
export const EXECUTION_FIELDS = {
  /** RUNNING, or the status it ended with; a paused execution stays RUNNING (`pause` says so). */
  status: "st",
  /** The state machine's name. */
  machine: "sm",
  /** The definition version it runs. */
  version: "v",
  /** The execution's name. */
  name: "nm",
  /** Its input: JSON, or a reference to it in the payloads hash (payloads/history-payloads.ts). */
  input: "in",
  /** Digest of the canonical input: a second start of the same name and input is the same start. */
  inputHash: "ih",
  /** When it started (ISO); its status-index score is the same instant in ms. */
  startedAt: "t0",
  /** When it ended (ISO). */
  stoppedAt: "t1",
  /** Its output (JSON or a payload reference), once it succeeded. */
  output: "out",
  /** The error and cause it failed, timed out or was stopped with. */
  error: "err",
  cause: "cause",
  /** History events so far: the history list holds exactly these. */
  historyCount: "hc",
  /** Hash of event `historyCount` (the genesis until there is one): the chain head (audit/chain.ts). */
  historyHead: "hh",
  /** The chain genesis's check (audit/chain.ts `eventCheck`): an export recomputes and compares it. */
  genesisCheck: "hg",
  /** The pause (JSON: reason, caller, time) while paused (store/scripts/pause-execution.ts). */
  pause: "ps",
  /** The version the start named, when it named one. */
  pinnedVersion: "pv",
  /** The alias the start went through, when it did. */
  alias: "al",
  /** The execution this one restarts. */
  restartedFrom: "rf",
  /** What this one was forked from: `<source execution>@<event id>` (executions/fork.ts). */
  forkedFrom: "fk",
  /** How often it was redriven, when last (ISO), and the client token of that redrive. */
  redriveCount: "rc",
  redrivenAt: "rd",
  redriveToken: "rt",
  /** How often a worker gave up on one of its runs (commit/give-up.ts). */
  givenUp: "gu",
  /** The caller's trace id, span id and tracestate, when the start joined a caller's trace (tracing/trace-context.ts). */
  traceId: "tr",
  parentSpanId: "tp",
  traceState: "ts",
  /** Its model budget (JSON, commit/usage.ts). */
  budget: "bg",
  /** The state machine's role at the start, when it has one: `$$.Execution.RoleArn`. */
  roleArn: "ra",
  /** The execution whose `states:startExecution` task started this one (runtime/children/). */
  parentExecution: "pe",
  /** The task attempt (`taskId`) that started it: a redelivered attempt finds its own child. */
  parentTask: "pk",
  /** A Distributed Map's child execution: the Map Run (ARN) that started it (map-runs/child-executions.ts). */
  mapRun: "mr",
  /**
   * A Map Run's child execution: the run (short id) its items run in, a run of the
   * parent's execution, which a StopExecution of the child stops (executions/execution-store.ts).
   */
  childRun: "cr",
  /** A Map Run's child execution: how many items it processes (1, or its batch's), AWS's `itemCount`. */
  itemCount: "ic",
  /** What its model calls spent so far (commit/usage.ts): calls, tokens in and out, cost (decimal). */
  modelCalls: "mc",
  inputTokens: "mi",
  outputTokens: "mo",
  costUsd: "mu",
} as const;

/**
 * A run, `r:<run>` (store/lua/run-state.ts). Its state is stored in 64-byte slices
 * `s1`..`sN` (`state` followed by the slice's number), or whole in `state`.
 */
export const RUN_FIELDS = {
  /** The run's seq: how many transitions it committed. */
  seq: "q",
  /** The follow-up jobs of its last commit (job-ids.ts), space-separated. */
  followUps: "fx",
  /** How many slices the state is stored in; 0: whole, in `state`. */
  stateSlices: "n",
  /** The state (stored form, codec.ts) when kept whole; with a number, one of its slices. */
  state: "s",
  /** A large input of the current state, kept apart from it, and its version (payloads/frame-input.ts). */
  input: "in",
  inputVersion: "iv",
  /**
   * A Distributed Map's item run: the child execution (short id) whose record and
   * history its events go to, in place of its execution's (map-runs/child-executions.ts).
   */
  historyOwner: "ho",
} as const;

/** An approval record, `ap:<id>` (approvals/approval-record.ts). */
export const APPROVAL_FIELDS = {
  /** The request (JSON: id, envelope, hash, createdAt); never changes. */
  request: "env",
  /** PENDING, or what ended it. */
  status: "st",
  /** The decisions so far (JSON array), and how many: the fence of the next decision. */
  decisions: "ds",
  decisionCount: "n",
  /** When it left PENDING (ms). */
  closedAt: "cl",
  /** When it was created (ms): its score in the inbox indexes. */
  createdAt: "t0",
  /** Its `<group>|<machine>` index dims, space-separated (store/lua/approval.ts). */
  indexDims: "ix",
  /** The run, task and task token it answers. */
  run: "run",
  task: "task",
  token: "tok",
  /** The schedule members of its task's timers, space-separated. */
  timers: "tm",
  /** '1': its changes are sent to the webhook. */
  notify: "nt",
  /** Seconds it stays readable once ended (0 = forever). */
  keepSeconds: "keep",
  /** Set (JSON: at, why) when it no longer matches what the history recorded: it takes no decision. */
  tampered: "bad",
  /**
   * Human tasks (JSON, approvals/approval-record.ts `Assignment`): its claim, delegation,
   * escalated groups and comments; absent until one of them happens.
   */
  assignment: "as",
} as const;

/** A state machine, `sm:<name>` (definitions/machines.ts). */
export const MACHINE_FIELDS = {
  /** Its latest version; 0 while its creation is claimed. */
  latest: "latest",
  /** STANDARD or EXPRESS. */
  type: "ty",
  /** Its role ARN. */
  roleArn: "role",
  /** When it was created (ISO). */
  createdAt: "createdAt",
  /** Its first version: those before it are an earlier machine's of the same name. */
  firstVersion: "first",
  /** The version counter, kept when the machine is deleted. */
  nextVersion: "next",
  /** The model budget its executions start with (JSON, commit/usage.ts). */
  budget: "bg",
} as const;

/** One version of a state machine, `smv:<name>:<version>` (definitions/machines.ts, definitions/versions.ts). */
export const VERSION_FIELDS = {
  /** SHA-256 of the canonical definition. */
  definitionHash: "hash",
  /** When it was created (ISO), and by whom. */
  createdAt: "createdAt",
  createdBy: "by",
  /** The definition (JSON). */
  definition: "def",
  /** The definition's text as it was sent, when it differs from `def`. */
  definitionText: "src",
  /** The version chain (audit/versions.ts): the previous version's link hash, and this one's. */
  previousVersionHash: "pvh",
  versionHash: "vh",
  /** When it was published (ISO), and its description. */
  publishedAt: "pt",
  description: "pd",
} as const;

/** A bulk operation, `op:<id>` (executions/operations/bulk.ts). */
export const OPERATION_FIELDS = {
  /** The action, its filter (JSON) and options (JSON). */
  action: "a",
  filter: "f",
  options: "o",
  /** RUNNING, SUCCEEDED or FAILED. */
  status: "st",
  /** Executions matched, acted on, skipped (already so) and failed so far. */
  matched: "m",
  done: "d",
  skipped: "s",
  failed: "x",
  /** The first failures (JSON array). */
  errors: "er",
  /** When it was created and finished (ISO), and by whom. */
  createdAt: "t0",
  finishedAt: "t1",
  createdBy: "by",
  /** The listing cursor it goes on from. */
  cursor: "c",
} as const;

/**
 * The deployment's counts, `stats` (executions/metrics.ts). Besides these, one
 * count per execution status, named by the status: RUNNING now, the others ended so far.
 */
export const STATS_FIELDS = {
  /** Timers armed: the schedule's `t:` members. */
  timers: "timers",
  /** Executions a worker gave up on (commit/give-up.ts). */
  givenUp: "poisoned",
} as const;

export type ExecutionField = keyof typeof EXECUTION_FIELDS;
export type RunField = keyof typeof RUN_FIELDS;
export type ApprovalField = keyof typeof APPROVAL_FIELDS;
export type OperationField = keyof typeof OPERATION_FIELDS;

/** Every table, by the kind of hash (the field-names test reads them all). */
export const FIELD_TABLES = {
  execution: EXECUTION_FIELDS,
  run: RUN_FIELDS,
  approval: APPROVAL_FIELDS,
  machine: MACHINE_FIELDS,
  version: VERSION_FIELDS,
  operation: OPERATION_FIELDS,
  stats: STATS_FIELDS,
} as const;

type Table = Readonly<Record<string, string>>;

/** The stored names of `names`, for HMGET or HDEL. */
export function storedFields<T extends Table, N extends keyof T>(
  table: T,
  names: readonly N[],
): T[N][] {
  return names.map((name) => table[name]!);
}

/** HMGET's answer to `storedFields(table, names)`, by name. */
export function byName<N extends string, V>(
  names: readonly N[],
  values: readonly (V | null | undefined)[],
): Record<N, V | null> {
  const named = {} as Record<N, V | null>;
  names.forEach((name, i) => (named[name] = values[i] ?? null));
  return named;
}

/** The field/value map to HSET for `values` given by name (undefined ones left out). */
export function toStored<T extends Table>(
  table: T,
  values: Partial<Record<keyof T, string | number>>,
): Record<string, string> {
  const stored: Record<string, string> = {};
  for (const [name, value] of Object.entries(values) as [keyof T, string | number | undefined][]) {
    if (value !== undefined) stored[table[name]!] = String(value);
  }
  return stored;
}

/** HGETALL's answer by name: the fields of `table` the hash has. */
export function fromStored<T extends Table>(
  table: T,
  hash: Readonly<Record<string, string>>,
): { [N in keyof T]?: string } {
  const named: { [N in keyof T]?: string } = {};
  for (const [name, field] of Object.entries(table) as [keyof T, string][]) {
    const value = hash[field];
    if (value !== undefined) named[name] = value;
  }
  return named;
}
