import type { Runtime } from "../../runtime/contract/index.js";
import type { MapRunRecord, MapRuns } from "../../runtime/map-runs/map-run-store.js";
import { shortId } from "../../runtime/store/ids.js";
import { parseExecutionArn } from "./arns.js";
import { awsError, invalidField } from "./errors.js";
import {
  epochSeconds,
  nextToken,
  optionalInteger,
  pageSize,
  requiredString,
  type Body,
} from "./fields.js";
import type { ActionTable, AwsContext } from "./protocol.js";

/**
 * Map Runs (a Distributed Map's run, runtime/map-runs/): ListMapRuns,
 * DescribeMapRun, UpdateMapRun, shaped as AWS's API reference shapes them. A Map
 * Run's items (or batches) run as child executions (runtime/map-runs/child-executions.ts):
 * `executionCounts` count them as `itemCounts` do.
 */

/** The runtime's Map Runs (the Redis runtime has them). */
function storeOf(runtime: Runtime): MapRuns {
  const mapRuns = (runtime as { mapRuns?: MapRuns }).mapRuns;
  if (!mapRuns) throw awsError("InternalFailure", "Map Runs need the Redis runtime");
  return mapRuns;
}

const MAP_RUN_ARN = /^arn:aws[a-z-]*:states:[^:]*:[^:]*:mapRun:[^:/]+\/[^:]+:([^:]+)$/;

async function recordOf(body: Body, ctx: AwsContext): Promise<MapRunRecord> {
  const arn = requiredString(body, "mapRunArn", { min: 1, max: 2000 });
  const match = MAP_RUN_ARN.exec(arn);
  if (!match) throw awsError("InvalidArn", `Invalid Arn: '${arn}'`);
  const record = await storeOf(ctx.runtime).describe(match[1]!);
  if (!record || record.arn !== arn) {
    throw awsError("ResourceNotFound", `Resource not found: '${arn}'`);
  }
  return record;
}

/** The Map Run's own state machine ARN, as AWS names it: `<machine>/<label>`. */
function mapRunStateMachineArn(record: MapRunRecord): string {
  const [, rest = ""] = record.arn.split(":mapRun:");
  return `${record.arn.split(":mapRun:")[0]}:stateMachine:${rest.slice(0, rest.lastIndexOf(":"))}`;
}

function counts(record: MapRunRecord) {
  // Aborted while running: children stopped one by one (StopExecution of the child).
  const stopped = record.aborted || 0;
  const running =
    record.status === "RUNNING" ? record.started - record.succeeded - record.failed - stopped : 0;
  const pending = record.status === "RUNNING" ? record.total - record.started : 0;
  const aborted =
    record.status === "RUNNING"
      ? stopped
      : Math.max(0, record.total - record.succeeded - record.failed);
  return {
    pending,
    running,
    succeeded: record.succeeded,
    failed: record.failed,
    timedOut: 0,
    aborted,
    total: record.total,
    resultsWritten: 0,
    failuresNotRedrivable: 0,
    pendingRedrive: 0,
  };
}

async function listMapRuns(body: Body, ctx: AwsContext): Promise<unknown> {
  const ref = parseExecutionArn(requiredString(body, "executionArn", { max: 256 }));
  if (ref.kind !== "standard" || !ref.ours) {
    throw awsError(
      "ExecutionDoesNotExist",
      `Execution Does Not Exist: '${String(body.executionArn)}'`,
    );
  }
  // The execution must exist (AWS: ExecutionDoesNotExist).
  await ctx.runtime.describeExecution(ref.executionId);
  const all = await storeOf(ctx.runtime).list(shortId(ref.executionId));
  const size = pageSize(body) ?? 100;
  const token = nextToken(body);
  const from = token !== undefined ? Number(token) : 0;
  if (!Number.isInteger(from) || from < 0)
    throw awsError("InvalidToken", `Invalid Token: '${token}'`);
  const page = all.slice(from, from + size);
  const out: Record<string, unknown> = {
    mapRuns: page.map((record) => ({
      executionArn: record.executionId,
      mapRunArn: record.arn,
      stateMachineArn: mapRunStateMachineArn(record),
      startDate: epochSeconds(record.startDate),
      ...(record.stopDate ? { stopDate: epochSeconds(record.stopDate) } : {}),
    })),
  };
  if (from + size < all.length) out.nextToken = String(from + size);
  return out;
}

async function describeMapRun(body: Body, ctx: AwsContext): Promise<unknown> {
  const record = await recordOf(body, ctx);
  const itemCounts = counts(record);
  return {
    mapRunArn: record.arn,
    executionArn: record.executionId,
    status: record.status,
    startDate: epochSeconds(record.startDate),
    ...(record.stopDate ? { stopDate: epochSeconds(record.stopDate) } : {}),
    maxConcurrency: record.maxConcurrency,
    toleratedFailurePercentage:
      record.toleratedFailurePercentage === "" ? 0 : record.toleratedFailurePercentage,
    toleratedFailureCount: record.toleratedFailureCount === "" ? 0 : record.toleratedFailureCount,
    itemCounts,
    executionCounts: itemCounts,
    // Redriven with its parent (MapRunRedriven): how many times, and when last.
    redriveCount: record.redriveCount || 0,
    ...(record.redriveDate ? { redriveDate: epochSeconds(record.redriveDate) } : {}),
  };
}

async function updateMapRun(body: Body, ctx: AwsContext): Promise<unknown> {
  const record = await recordOf(body, ctx);
  const maxConcurrency = optionalInteger(body, "maxConcurrency", 0, 100_000_000);
  const toleratedFailureCount = optionalInteger(
    body,
    "toleratedFailureCount",
    0,
    Number.MAX_SAFE_INTEGER,
  );
  const percentage = body.toleratedFailurePercentage;
  if (percentage !== undefined && percentage !== null) {
    if (typeof percentage !== "number" || percentage < 0 || percentage > 100) {
      throw invalidField("toleratedFailurePercentage", "Member must be between 0 and 100");
    }
  }
  if (maxConcurrency === undefined && toleratedFailureCount === undefined && percentage == null) {
    throw awsError(
      "ValidationException",
      "At least one of maxConcurrency, toleratedFailurePercentage or toleratedFailureCount must be given",
    );
  }
  const reply = await storeOf(ctx.runtime).update(record, {
    ...(maxConcurrency !== undefined ? { maxConcurrency } : {}),
    ...(toleratedFailureCount !== undefined ? { toleratedFailureCount } : {}),
    ...(typeof percentage === "number" ? { toleratedFailurePercentage: percentage } : {}),
  });
  if (reply === "notRunning") {
    throw awsError("ValidationException", `Map Run '${record.arn}' is not running`);
  }
  return {};
}

/**
 * ListExecutions with `mapRunArn`: the Map Run's child executions, one per item
 * (or batch), oldest first, each with the `mapRunArn` (AWS gives it only to this
 * listing); an unknown Map Run is ResourceNotFound, as on AWS. `stateMachineArn`
 * is the Map Run's own (`<machine>/<label>`).
 */
export async function listMapRunExecutions(body: Body, ctx: AwsContext): Promise<unknown> {
  const record = await recordOf(body, ctx);
  const status = typeof body.statusFilter === "string" ? body.statusFilter : undefined;
  const all = (await storeOf(ctx.runtime).children(record)).filter(
    (e) => status === undefined || e.status === status,
  );
  const size = pageSize(body) ?? 100;
  const token = nextToken(body);
  const from = token !== undefined ? Number(token) : 0;
  if (!Number.isInteger(from) || from < 0)
    throw awsError("InvalidToken", `Invalid Token: '${token}'`);
  const out: Record<string, unknown> = {
    executions: all.slice(from, from + size).map((e) => ({
      executionArn: e.executionId,
      stateMachineArn: mapRunStateMachineArn(record),
      name: e.name,
      status: e.status === "PAUSED" ? "RUNNING" : e.status,
      startDate: epochSeconds(e.startedAt),
      ...(e.stoppedAt ? { stopDate: epochSeconds(e.stoppedAt) } : {}),
      mapRunArn: record.arn,
      // Items the child processes (1, or its batch's): AWS lists it by Map Run only.
      ...(e.itemCount !== undefined ? { itemCount: e.itemCount } : {}),
      // Its own: a child is redriven with its parent when it failed, was aborted or
      // timed out (its record counts it: map-runs/child-executions.ts); the others keep 0.
      redriveCount: e.redriveCount ?? 0,
      ...(e.redrivenAt ? { redriveDate: epochSeconds(e.redrivenAt) } : {}),
    })),
  };
  if (from + size < all.length) out.nextToken = String(from + size);
  return out;
}

export const mapRunActions: ActionTable = {
  ListMapRuns: { permission: "executions:read", run: listMapRuns },
  DescribeMapRun: { permission: "executions:read", run: describeMapRun },
  UpdateMapRun: { permission: "executions:write", run: updateMapRun },
};
