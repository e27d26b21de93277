import { redrivability } from "../../runtime/executions/redrive.js";
import type { Json } from "../../engine/core/json.js";
import {
  EXECUTION_STATUSES,
  RuntimeError,
  type ExecutionRecord,
  type ExecutionStatus,
  type ExecutionSummary,
  type StartTarget,
} from "../../runtime/contract/index.js";
import { isValidExecutionName, stateMachineArn } from "../../runtime/store/ids.js";
import { parseExecutionArn, parseStateMachineArn, type StateMachineRef } from "./arns.js";
import { awsError } from "./errors.js";
import { awsEvent } from "./history.js";
import {
  epochSeconds,
  jsonString,
  nextToken,
  optionalBoolean,
  optionalEnum,
  optionalString,
  pageSize,
  requiredString,
  type Body,
} from "./fields.js";
import type { ActionTable, AwsContext } from "./protocol.js";
import { describeBody, ours } from "./state-machines.js";
import { listMapRunExecutions } from "./map-runs.js";

/**
 * Executions: StartExecution, DescribeExecution, StopExecution, ListExecutions,
 * GetExecutionHistory, DescribeStateMachineForExecution.
 */

/** Which version a start through this ARN runs; a version must be published. */
export async function startTarget(ref: StateMachineRef, ctx: AwsContext): Promise<StartTarget> {
  if (ref.alias !== undefined) return { alias: ref.alias };
  if (ref.version !== undefined) {
    await ctx.runtime.getPublishedVersion(ref.name, ref.version);
    return { version: ref.version };
  }
  return {};
}

export function executionName(body: Body): string | undefined {
  const name = optionalString(body, "name", { min: 1, max: 80 });
  if (name !== undefined && !isValidExecutionName(name)) {
    throw awsError(
      "InvalidName",
      `Invalid Name: '${name}' (no white space, brackets, wildcards, control characters or " # % \\ ^ | ~ \` $ & , ; : /)`,
    );
  }
  return name;
}

async function start(body: Body, ctx: AwsContext): Promise<unknown> {
  const ref = ours(parseStateMachineArn(requiredString(body, "stateMachineArn")));
  const name = executionName(body);
  const input = jsonString(body, "input", "InvalidExecutionInput", {}) as Json;
  const target = await startTarget(ref, ctx);
  // As AWS throttles StartExecution, and as the REST start is throttled (one budget).
  await ctx.admission?.admit(ctx.caller?.name, ref.name);
  const started = await ctx.runtime.startExecution(ref.name, {
    input,
    ...(name !== undefined ? { name } : {}),
    ...(ctx.caller ? { caller: ctx.caller } : {}),
    ...(ctx.trace ? { trace: ctx.trace } : {}),
    ...target,
  });
  if (!started.created) {
    // AWS: the same name and input answer the running execution; once it has ended,
    // the name is taken (for the 90 days AWS keeps it).
    const record = await ctx.runtime.describeExecution(started.executionId);
    if (record.status !== "RUNNING" && record.status !== "PAUSED") {
      throw awsError(
        "ExecutionAlreadyExists",
        `Execution Already Exists: '${started.executionId}'`,
      );
    }
  }
  return { executionArn: started.executionId, startDate: epochSeconds(started.startedAt) };
}

/** Reads an execution; Express executions (and other accounts') are not kept to read. */
async function record(arn: unknown, ctx: AwsContext): Promise<ExecutionRecord> {
  const ref = parseExecutionArn(arn);
  if (ref.kind === "express" || !ref.ours) {
    throw awsError(
      "ExecutionDoesNotExist",
      ref.kind === "express"
        ? `Execution Does Not Exist: '${String(arn)}' (Express executions keep no record)`
        : `Execution Does Not Exist: '${String(arn)}'`,
    );
  }
  return ctx.runtime.describeExecution(ref.executionId);
}

/** What DescribeExecution and ListExecutions say of the version and alias a start named. */
function qualifiers(e: ExecutionSummary): Record<string, string> {
  const out: Record<string, string> = {};
  if (e.pinnedVersion !== undefined)
    out.stateMachineVersionArn = stateMachineArn(e.stateMachine, e.pinnedVersion);
  if (e.alias !== undefined) out.stateMachineAliasArn = stateMachineArn(e.stateMachine, e.alias);
  return out;
}

async function describe(body: Body, ctx: AwsContext): Promise<unknown> {
  const arn = requiredString(body, "executionArn", { max: 256 });
  const metadataOnly =
    optionalEnum(body, "includedData", ["ALL_DATA", "METADATA_ONLY"] as const) === "METADATA_ONLY";
  const r = await record(arn, ctx);
  const out: Record<string, unknown> = {
    executionArn: r.executionId,
    stateMachineArn: stateMachineArn(r.stateMachine),
    name: r.name,
    status: awsStatus(r.status),
    startDate: epochSeconds(r.startedAt),
    ...qualifiers(r),
    redriveCount: r.redriveCount ?? 0,
    ...redriveStatus(r),
  };
  if (r.redrivenAt !== undefined) out.redriveDate = epochSeconds(r.redrivenAt);
  if (r.stoppedAt !== undefined) out.stopDate = epochSeconds(r.stoppedAt);
  // A Distributed Map's child execution names the Map Run that dispatched it.
  if (r.mapRunArn !== undefined) out.mapRunArn = r.mapRunArn;
  return { ...out, ...resultFields(r, metadataOnly) };
}

/**
 * What DescribeExecution and StartSyncExecution say of a run's data: input and
 * output as JSON strings with their `…Details` (left out with METADATA_ONLY), error
 * and cause.
 */
export function resultFields(
  r: { input: unknown; output?: unknown; error?: string; cause?: string },
  metadataOnly: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!metadataOnly) {
    out.input = JSON.stringify(r.input);
    out.inputDetails = { included: true };
    if (r.output !== undefined) {
      out.output = JSON.stringify(r.output);
      out.outputDetails = { included: true };
    }
  }
  if (r.error !== undefined) out.error = r.error;
  if (r.cause !== undefined) out.cause = r.cause;
  return out;
}

async function stop(body: Body, ctx: AwsContext): Promise<unknown> {
  const arn = requiredString(body, "executionArn", { max: 256 });
  const error = optionalString(body, "error", { max: 256 });
  const cause = optionalString(body, "cause", { max: 32768 });
  const r = await record(arn, ctx);
  try {
    const stopped = await ctx.runtime.stopExecution(r.executionId, {
      ...(error !== undefined ? { error } : {}),
      ...(cause !== undefined ? { cause } : {}),
      ...(ctx.caller ? { caller: ctx.caller } : {}),
    });
    return { stopDate: epochSeconds(stopped.stoppedAt ?? new Date().toISOString()) };
  } catch (err) {
    // Stopping what has ended changes nothing and answers when it ended.
    if (!(err instanceof RuntimeError) || err.code !== "ExecutionNotRunning") throw err;
    const ended = await ctx.runtime.describeExecution(r.executionId);
    return { stopDate: epochSeconds(ended.stoppedAt ?? ended.startedAt) };
  }
}

const STATUS_FILTERS = [...EXECUTION_STATUSES, "PENDING_REDRIVE"] as const;

/**
 * PAUSED is Stepwise's own (a REST operation): AWS clients, which know no such
 * status, see a paused execution as what it is underneath, RUNNING. A statusFilter
 * of PAUSED is accepted as an extension.
 */
function awsStatus(status: string): string {
  return status === "PAUSED" ? "RUNNING" : status;
}

async function list(body: Body, ctx: AwsContext): Promise<unknown> {
  const arn = optionalString(body, "stateMachineArn", { min: 1, max: 256 });
  if (body.mapRunArn !== undefined) return listMapRunExecutions(body, ctx);
  const status = optionalEnum(body, "statusFilter", STATUS_FILTERS);
  optionalEnum(body, "redriveFilter", ["REDRIVEN", "NOT_REDRIVEN"] as const);
  const limit = pageSize(body);
  const cursor = nextToken(body);
  const filter: { stateMachine?: string; pinnedVersion?: number; alias?: string } = {};
  if (arn !== undefined) {
    const ref = ours(parseStateMachineArn(arn));
    const machine = await ctx.runtime.getStateMachine(ref.name); // StateMachineDoesNotExist
    if (machine.type === "EXPRESS") {
      // Express executions are not kept, so there is nothing to list (as AWS answers).
      throw awsError(
        "StateMachineTypeNotSupported",
        "This operation is not supported by this type of state machine",
      );
    }
    filter.stateMachine = ref.name;
    if (ref.version !== undefined) filter.pinnedVersion = ref.version;
    if (ref.alias !== undefined) {
      await ctx.runtime.getStateMachineAlias(ref.name, ref.alias);
      filter.alias = ref.alias;
    }
  }
  // Nothing here waits for a redrive.
  if (status === "PENDING_REDRIVE") return { executions: [] };
  const page = await ctx.runtime.listExecutions({
    ...filter,
    ...(status !== undefined ? { status: status as ExecutionStatus } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  const executions = page.items.map((e) => {
    const item: Record<string, unknown> = {
      executionArn: e.executionId,
      stateMachineArn: stateMachineArn(e.stateMachine),
      name: e.name,
      status: awsStatus(e.status),
      startDate: epochSeconds(e.startedAt),
      ...qualifiers(e),
      redriveCount: 0,
    };
    if (e.stoppedAt !== undefined) item.stopDate = epochSeconds(e.stoppedAt);
    return item;
  });
  return page.nextCursor !== undefined
    ? { executions, nextToken: page.nextCursor }
    : { executions };
}

async function history(body: Body, ctx: AwsContext): Promise<unknown> {
  const arn = requiredString(body, "executionArn", { max: 256 });
  const limit = pageSize(body);
  const reverse = optionalBoolean(body, "reverseOrder") ?? false;
  const includeData = optionalBoolean(body, "includeExecutionData") ?? true;
  const cursor = nextToken(body);
  const r = await record(arn, ctx);
  const page = await ctx.runtime.getHistory(r.executionId, {
    reverse,
    ...(limit !== undefined ? { limit } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  const events = page.items.map((e) => awsEvent(e, includeData));
  return page.nextCursor !== undefined ? { events, nextToken: page.nextCursor } : { events };
}

/**
 * The state machine an execution ran. A Map Run's child ran its parent's (the Map
 * state's `ItemProcessor`): AWS answers the parent's state machine, as it ran in the
 * parent, with the Map Run's ARN and its label (the `<machine>/<label>` qualifier).
 */
async function machineForExecution(body: Body, ctx: AwsContext): Promise<unknown> {
  const r = await record(requiredString(body, "executionArn", { max: 256 }), ctx);
  const child = mapRunChild(r);
  const ran = child ? await ctx.runtime.describeExecution(child.parent) : r;
  const machine = await ctx.runtime.getStateMachine(ran.stateMachine, ran.version);
  const { definition, name, roleArn, revisionId, loggingConfiguration, tracingConfiguration } =
    describeBody(machine, stateMachineArn(ran.stateMachine));
  return {
    stateMachineArn: stateMachineArn(ran.stateMachine),
    name,
    definition,
    roleArn,
    updateDate: epochSeconds(machine.createdAt),
    revisionId,
    loggingConfiguration,
    tracingConfiguration,
    ...(child ? { mapRunArn: child.mapRunArn, label: child.label } : {}),
  };
}

/** A Map Run's child: its parent execution, Map Run and label; undefined for any other. */
export function mapRunChild(
  r: Pick<ExecutionRecord, "stateMachine" | "mapRunArn" | "parentExecution">,
): { parent: string; mapRunArn: string; label: string } | undefined {
  const slash = r.stateMachine.indexOf("/");
  if (r.mapRunArn === undefined || r.parentExecution === undefined || slash < 0) return undefined;
  return {
    parent: r.parentExecution,
    mapRunArn: r.mapRunArn,
    label: r.stateMachine.slice(slash + 1),
  };
}

/**
 * AWS's redriveStatus and, when it cannot be redriven, why (the runtime's
 * `redrivability`). A running execution, paused or not, in AWS's words: AWS clients
 * know no PAUSED.
 */
function redriveStatus(r: ExecutionRecord): Record<string, string> {
  const answer = redrivability(r, Date.now());
  if (answer.redrivable) return { redriveStatus: "REDRIVABLE" };
  return {
    redriveStatus: "NOT_REDRIVABLE",
    redriveStatusReason:
      r.status === "RUNNING" || r.status === "PAUSED"
        ? "Execution is RUNNING and cannot be redriven"
        : answer.reason,
  };
}

async function redrive(body: Body, ctx: AwsContext): Promise<unknown> {
  const arn = requiredString(body, "executionArn", { max: 256 });
  const clientToken = optionalString(body, "clientToken", { min: 1, max: 64 });
  const r = await record(arn, ctx);
  const after = await ctx.runtime.redriveExecution(r.executionId, {
    ...(clientToken !== undefined ? { clientToken } : {}),
    ...(ctx.caller ? { caller: ctx.caller } : {}),
  });
  return { redriveDate: epochSeconds(after.redrivenAt ?? new Date().toISOString()) };
}

export const executionActions: ActionTable = {
  RedriveExecution: { permission: "executions:write", run: redrive },
  StartExecution: { permission: "executions:write", run: start },
  DescribeExecution: { permission: "executions:read", run: describe },
  StopExecution: { permission: "executions:write", run: stop },
  ListExecutions: { permission: "executions:read", run: list },
  GetExecutionHistory: { permission: "executions:read", run: history },
  DescribeStateMachineForExecution: { permission: "executions:read", run: machineForExecution },
};
