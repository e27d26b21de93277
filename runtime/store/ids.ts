import { randomBytes } from "../../engine/drivers/entropy.js";

/**
 * Identifiers. An execution is `arn:aws:states:<region>:<account>:execution:<machine>:<name>`
 * (what `$$.Execution.Id` shows, as on AWS); its root run has the same id and its
 * children append `/<serial>/<index>` (see engine/flow/join.ts). Keys and job ids
 * use the "short" form without the constant ARN prefix, to keep Redis small.
 *
 * The region and account are those a deployment claims (`STEPWISE_AWS_REGION`,
 * `STEPWISE_AWS_ACCOUNT`, read by config/), set once at start before any ARN is
 * made: the REST API and the AWS API issue the same ARNs, and AWS SDKs accept them
 * only when they look like AWS's own. Live bindings: importers see the values set.
 */
export let AWS_REGION = "us-east-1";
export let AWS_ACCOUNT = "123456789012";
/** `arn:aws:states:<region>:<account>:`, what every Stepwise ARN starts with. */
export let ARN_BASE = "";
export let EXECUTION_ARN_PREFIX = "";
export let STATE_MACHINE_ARN_PREFIX = "";
export let ACTIVITY_ARN_PREFIX = "";

/** The deployment's region and account (config/ checks their shape). Call before serving. */
export function setDeploymentIdentity(region: string, account: string): void {
  AWS_REGION = region;
  AWS_ACCOUNT = account;
  ARN_BASE = `arn:aws:states:${region}:${account}:`;
  EXECUTION_ARN_PREFIX = `${ARN_BASE}execution:`;
  STATE_MACHINE_ARN_PREFIX = `${ARN_BASE}stateMachine:`;
  ACTIVITY_ARN_PREFIX = `${ARN_BASE}activity:`;
}
setDeploymentIdentity(AWS_REGION, AWS_ACCOUNT);

/**
 * Names of state machines (and activities): the API's rule (api/schemas.ts
 * NAME_PATTERN): letters, digits, `_`, `.`, `-`, 1–80 characters. They travel alone
 * as a URL path segment, hence the narrower set and no `.` or `..`.
 */
const NAME = /^(?!\.\.?$)[A-Za-z0-9_.-]{1,80}$/;

export function isValidName(name: string): boolean {
  return NAME.test(name);
}

/**
 * What AWS forbids in an execution name (StartExecution `name`): white space,
 * brackets `< > { } [ ]`, wildcards `? *`, the specials `" # % \ ^ | ~ $ & , ; : /` and
 * the backtick, control characters (U+0000–001F, U+007F–009F, U+FFFE–FFFF),
 * surrogates and U+10FFFF. Everything else is allowed, non-ASCII letters included; AWS only
 * *recommends* `0-9 A-Z a-z - _` (for CloudWatch Logs).
 *
 * So execution names never contain `:`, `/`, `#`, `|` or white space, which ids,
 * keys, job ids and follow-up lists use as separators, nor `%`, so percent-encoding
 * them is unambiguous.
 *
 * A regex character class body (all but `:`), for patterns compiled with the `u`
 * flag, as ajv compiles them.
 */
const FORBIDDEN_BUT_COLON = String.raw`\s<>\{\}\[\]\?\*"#%\\\^\|~\x60\$&,;\/\u0000-\u001f\u007f-\u009f\ufffe\uffff\ud800-\udfff\u{10ffff}`;

/** 1–80 characters (code points), none of them forbidden by AWS. */
export const EXECUTION_NAME_PATTERN = `^[^${FORBIDDEN_BUT_COLON}:]{1,80}$`;

/**
 * What an execution id in a URL may look like: the ARN prefix, a state machine
 * name, `:` and an execution name — the prefix (its region and account are
 * configured) + 80 + 1 + 80 code points at most; a Distributed Map's child execution
 * qualifies the name with its Map's label (`<machine>/<label>:<name>`, 40 more and
 * the `/`). Whether it names an execution is the lookup's business (404); this keeps
 * other text out.
 */
export const EXECUTION_ID_PATTERN = `^(?:(?=[\\s\\S]{1,${[...EXECUTION_ARN_PREFIX].length + 161}}$)[^${FORBIDDEN_BUT_COLON}]+|(?=[\\s\\S]{1,${[...EXECUTION_ARN_PREFIX].length + 202}}$)[^${FORBIDDEN_BUT_COLON}]+\\/[^${FORBIDDEN_BUT_COLON}]+)$`;

const EXECUTION_NAME = new RegExp(EXECUTION_NAME_PATTERN, "u");

export function isValidExecutionName(name: string): boolean {
  return EXECUTION_NAME.test(name);
}

/**
 * An execution id's state machine part: a state machine's name, or, for a Distributed
 * Map's child execution, its Map Run's `<machine>/<label>` (map-runs/child-executions.ts).
 */
export function isValidMachinePart(part: string): boolean {
  const slash = part.indexOf("/");
  if (slash < 0) return isValidName(part);
  return isValidName(part.slice(0, slash)) && isValidExecutionName(part.slice(slash + 1));
}

export function executionArn(machine: string, name: string): string {
  return `${EXECUTION_ARN_PREFIX}${machine}:${name}`;
}

/** The unqualified ARN, or with a qualifier: a version number or an alias name. */
export function stateMachineArn(machine: string, qualifier?: string | number): string {
  return qualifier === undefined
    ? `${STATE_MACHINE_ARN_PREFIX}${machine}`
    : `${STATE_MACHINE_ARN_PREFIX}${machine}:${qualifier}`;
}

export function activityArn(name: string): string {
  return `${ACTIVITY_ARN_PREFIX}${name}`;
}

/** Run, task or timer id → short id (what keys and schedule members carry). */
export function shortId(id: string): string {
  if (!id.startsWith(EXECUTION_ARN_PREFIX)) throw new Error(`not a Stepwise id: '${id}'`);
  return id.slice(EXECUTION_ARN_PREFIX.length);
}

export function longId(short: string): string {
  return EXECUTION_ARN_PREFIX + short;
}

/** The execution a run, task or timer (short id) belongs to: everything before the first `/` or `#`. */
export function executionOf(short: string): string {
  const cut = short.search(/[/#]/);
  return cut < 0 ? short : short.slice(0, cut);
}

/** The run a task or timer id (short) belongs to: everything before the last `#`. */
export function runOfTask(shortTaskId: string): string {
  return shortTaskId.slice(0, shortTaskId.lastIndexOf("#"));
}

/** The machine name of an execution (short id `<machine>:<name>`). */
export function machineOf(exec: string): string {
  return exec.slice(0, exec.indexOf(":"));
}

/**
 * BullMQ job ids may not contain `:`; names never contain `|`, and the seq after
 * the last `@` is a number, so two runs never share a job id (even when an
 * execution name contains `@`). A transition job is `<run>@<seq>`: enqueueing it
 * twice is harmless.
 */
export function stepJobId(run: string, seq: number): string {
  return `${run.replace(/:/g, "|")}@${seq}`;
}

export function taskJobId(task: string): string {
  return task.replace(/:/g, "|");
}

/** The execution-level `TimeoutSeconds` timer of an execution (short id). */
export function executionTimeoutTimer(exec: string): string {
  return `${exec}#timeout`;
}

/**
 * Schedule members: timers fire, leases re-ensure a job (see scheduler.ts). The
 * kinds are injected into the Lua source (store/lua/prelude.ts) as `MEMBER`.
 */
export const MEMBER_KINDS = { timer: "t:", run: "r:", task: "k:" } as const;

export const member = {
  timer: (shortTimerId: string) => `${MEMBER_KINDS.timer}${shortTimerId}`,
  run: (run: string) => `${MEMBER_KINDS.run}${run}`,
  task: (task: string) => `${MEMBER_KINDS.task}${task}`,
};

/** 128 random bits, URL-safe: task tokens and the nonce of token-waiting steps. */
export function randomToken(): string {
  return Buffer.from(randomBytes(16)).toString("base64url");
}
