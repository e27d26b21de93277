import type { MapState } from "../core/definition.js";
import { StatesError } from "../core/errors.js";
import type { Json } from "../core/json.js";
import { operationKey } from "../core/operation-key.js";
import { readInto } from "../core/payload-ref.js";
import { failWith, guarded, handleStateError } from "../flow/failure.js";
import { childScopesOf, continueJoin, openJoin } from "../flow/join.js";
import type { RunEvent } from "../core/events.js";
import type { Join } from "../core/run.js";
import { io } from "../io/index.js";
import { readStatePath } from "../io/jsonpath-io.js";
import type { StepContext } from "../step-context.js";
import { batchItems } from "./map-batches.js";
import { isExpressProcessor } from "./map-express-chunk-ids.js";
import { openChunks, startChunks } from "./map-express-chunks.js";
import { childrenState, succeedChildren } from "./children.js";
import type { StateHandler } from "./handler.js";
import {
  isDistributed,
  ITEM_READER_RESOURCE,
  itemReaderRequest,
  mapRunId,
  newMapRunArn,
  readerEffectiveInput,
  RESULT_WRITER_RESOURCE,
  resultWriterTarget,
  transformResults,
  writerConfig,
  type MapIoPurpose,
  type ResultWriterRequest,
} from "./map-io-resources.js";

function runtime(ctx: StepContext, message: string): StatesError {
  return new StatesError("States.Runtime", `${ctx.causePrefix()} ${message}`);
}

function start(ctx: StepContext, state: MapState): void {
  if (state.ResultWriter && !isDistributed(state)) {
    throw new StatesError(
      "States.ResultWriterFailed",
      `${ctx.causePrefix()} A ResultWriter needs a Map in DISTRIBUTED mode.`,
    );
  }
  if (isDistributed(state) && ctx.aws) {
    // A Map Run per start of the state (a Retry starts another, as on AWS). Histories
    // of the earlier format had none: their journals replay without one (test/golden).
    ctx.run.current = { ...ctx.frame, mapRunArn: newMapRunArn(ctx, state) };
  }
  if (state.ItemReader) {
    if (!isDistributed(state)) {
      throw new StatesError(
        "States.ItemReaderFailed",
        `${ctx.causePrefix()} An ItemReader needs a Map in DISTRIBUTED mode.`,
      );
    }
    // The items are read at the edge (runtime/map-runs/): the answer comes back as a task result.
    ownTask(
      ctx,
      "itemReader",
      ITEM_READER_RESOURCE,
      itemReaderRequest(ctx, state, ctx.frame.input) as unknown as Json,
    );
    return;
  }
  const { items, effective } = io(ctx, state).mapItems(ctx, state, ctx.frame.input);
  iterate(ctx, state, items, effective);
}

/** The Map's own I/O as a task of the driver's (no Task events: AWS records none for it). */
function ownTask(ctx: StepContext, purpose: MapIoPurpose, resource: string, input: Json): void {
  const taskId = `${ctx.run.runId}#${ctx.nextSerial()}`;
  ctx.setPhase({ kind: "task", taskId, timerIds: [], purpose });
  ctx.emit({
    type: "RunTask",
    runId: ctx.run.runId,
    taskId,
    operationKey: operationKey(taskId),
    stateName: ctx.frame.name,
    resource,
    input,
    attempt: ctx.frame.retryCount ?? 0,
  });
}

type MapNumber = "MaxConcurrency" | "ToleratedFailureCount" | "ToleratedFailurePercentage";

/** A decimal number as JSON writes one (`"1"`, `"2.5"`, `"-1"`): what a numeric string may hold. */
const NUMERIC_STRING = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;

/**
 * `MaxConcurrency`, `ToleratedFailureCount`, `ToleratedFailurePercentage`, or the
 * value their `…Path` selects. AWS takes a numeric string there as the number it
 * spells (a count read from a variable or from text often is one: `"1"`); the
 * value is then checked as a number would be. Anything else is the language's to
 * judge (io/), with its error naming the value.
 */
function mapNumber(ctx: StepContext, state: MapState, field: MapNumber, raw: Json) {
  const lang = io(ctx, state);
  const path = (state as unknown as Record<string, Json | undefined>)[`${field}Path`];
  if (typeof path === "string" && ctx.language(state) === "JSONPath") {
    const found = readStatePath(ctx, path, ctx.pathScope(raw));
    if (found.found && typeof found.value === "string" && NUMERIC_STRING.test(found.value)) {
      const literal = { ...state, [field]: Number(found.value) } as Record<string, unknown>;
      delete literal[`${field}Path`];
      return lang.number(ctx, literal as unknown as MapState, field, raw);
    }
  }
  return lang.number(ctx, state, field, raw);
}

/** Starts one child per item (or batch), at most `MaxConcurrency` at once. */
function iterate(ctx: StepContext, state: MapState, items: Json[], effective: Json): void {
  const lang = io(ctx, state);
  const raw = ctx.frame.input;
  const maxConcurrency = mapNumber(ctx, state, "MaxConcurrency", raw) ?? 0;
  // HISTORY_FORMAT_AWS: AWS reads the failure tolerance once the Map has started
  // (MapStateStarted, then the failure), as its recordings show.
  const tolerance = () => {
    const count = mapNumber(ctx, state, "ToleratedFailureCount", raw);
    const percentage = mapNumber(ctx, state, "ToleratedFailurePercentage", raw);
    if (count !== undefined && count < 0) {
      throw runtime(ctx, "ToleratedFailureCount cannot be negative.");
    }
    if (percentage !== undefined && (percentage < 0 || percentage > 100)) {
      throw runtime(ctx, "ToleratedFailurePercentage must be between 0 and 100.");
    }
    return { count, percentage };
  };
  const early = ctx.aws ? undefined : tolerance();
  const selected = items.map((item, i) => lang.mapItemInput(ctx, state, effective, item, i));
  const inputs = state.ItemBatcher ? batchItems(ctx, state, selected, raw) : selected;
  ctx.record("MapStateStarted", { length: inputs.length });
  const { count: toleratedFailureCount, percentage: toleratedFailurePercentage } =
    early ?? tolerance();
  // AWS starts the Map Run once the tolerance is read (an invalid one fails before it).
  const mapRunArn = ctx.frame.mapRunArn;
  if (mapRunArn !== undefined) ctx.record("MapRunStarted", { mapRunArn });
  const plan: Parameters<typeof openJoin>[1] = {
    inputs,
    maxConcurrency: Math.max(0, maxConcurrency),
  };
  if (toleratedFailureCount !== undefined) plan.toleratedFailureCount = toleratedFailureCount;
  if (toleratedFailurePercentage !== undefined) {
    plan.toleratedFailurePercentage = toleratedFailurePercentage;
  }
  // EXPRESS children run in memory, chunk by chunk, without histories of their own.
  const join = isExpressProcessor(state)
    ? openChunks(ctx, state, plan)
    : openJoin(ctx, plan, childScopesOf(ctx));
  ctx.setPhase({ kind: "children", join });
  if (join.total === 0) collected(ctx, state, []);
}

/**
 * Every child ended: a Distributed Map with a ResultWriter writes their results
 * (at the edge, then succeeds with where it wrote), or formats them (WriterConfig
 * alone); else the state succeeds with the outputs.
 */
function collected(ctx: StepContext, state: MapState, outputs: Json[]): void {
  const mapRunArn = ctx.frame.mapRunArn;
  if (mapRunArn === undefined && state.ResultWriter && isDistributed(state) && ctx.aws) {
    // A redriven Map whose Map Run had succeeded (its state failed after it: the redrive
    // collects the outputs again, engine/flow/redrive-join.ts, without redriving that Map
    // Run): its results still go where its ResultWriter says, under an ARN of their own.
    // The frame keeps none: this Map Run has no MapRunStarted, so it writes no MapRun* events.
    redrivenWrite(ctx, state, outputs, newMapRunArn(ctx, state));
    return;
  }
  const phase = ctx.frame.phase;
  const failed = phase.kind === "collecting" ? (phase.failed ?? 0) : 0;
  if (mapRunArn === undefined || !state.ResultWriter) {
    if (mapRunArn !== undefined) ctx.record("MapRunSucceeded");
    succeedChildren(ctx, state, outputs);
    return;
  }
  guarded(ctx, state, () => {
    const { transformation, outputType } = writerConfig(ctx, state);
    const target = resultWriterTarget(ctx, state, ctx.frame.input);
    if (!target) {
      ctx.record("MapRunSucceeded");
      succeedChildren(ctx, state, transformResults(outputs, transformation));
      return;
    }
    const request: ResultWriterRequest = {
      Bucket: target.bucket,
      Prefix: target.prefix,
      MapRunArn: mapRunArn,
      Transformation: transformation,
      OutputType: outputType,
      // The join counts failures, the driver keeps outputs (null for a child that failed).
      Results: outputs.map((output) => ({
        Status: failed > 0 && output === null ? "FAILED" : "SUCCEEDED",
        Output: output,
      })),
    };
    ownTask(ctx, "resultWriter", RESULT_WRITER_RESOURCE, request as unknown as Json);
  });
}

/** The results of a redriven Map, written as its first run would have written them. */
function redrivenWrite(
  ctx: StepContext,
  state: MapState,
  outputs: Json[],
  mapRunArn: string,
): void {
  guarded(ctx, state, () => {
    const { transformation, outputType } = writerConfig(ctx, state);
    const target = resultWriterTarget(ctx, state, ctx.frame.input);
    if (!target) {
      succeedChildren(ctx, state, transformResults(outputs, transformation));
      return;
    }
    const request: ResultWriterRequest = {
      Bucket: target.bucket,
      Prefix: target.prefix,
      MapRunArn: mapRunArn,
      Transformation: transformation,
      OutputType: outputType,
      Results: outputs.map((output) => ({ Status: "SUCCEEDED", Output: output })),
    };
    ownTask(ctx, "resultWriter", RESULT_WRITER_RESOURCE, request as unknown as Json);
  });
}

function purposeOf(ctx: StepContext): MapIoPurpose | undefined {
  const phase = ctx.frame.phase;
  return phase.kind === "task" ? phase.purpose : undefined;
}

/** The Map's own task failed: the Map Run failed, the state fails (Retry and Catch apply). */
function ownTaskFailed(ctx: StepContext, state: MapState, error: string, cause: string): void {
  if (purposeOf(ctx) === "resultWriter" && ctx.frame.mapRunArn !== undefined) {
    ctx.record("MapRunFailed", { error, cause });
  }
  const failed = () => ctx.record("MapStateFailed", { error, cause });
  if (ctx.aws) failWith(ctx, state, error, cause, failed);
  else {
    failed();
    handleStateError(ctx, state, new StatesError(error, cause));
  }
}

/**
 * Map: one child run per item of the input array (or per batch with ItemBatcher),
 * at most `MaxConcurrency` at once; the output lists the children's outputs in
 * item order. A DISTRIBUTED Map is a Map Run (its events in the history) whose
 * items may come from S3 (ItemReader) and whose results may go to S3
 * (ResultWriter); its children run as child executions of the Map Run, each with a
 * history of its own (map-child-executions.ts), while the driver still runs them as
 * child runs of this execution; with an EXPRESS processor they run in memory, in
 * chunks, without histories (map-express-chunks.ts).
 */
export const map: StateHandler<MapState> = childrenState<MapState>({
  kind: "Map",
  start,
  failure: (verdict) =>
    verdict.exceededTolerance
      ? {
          error: "States.ExceedToleratedFailureThreshold",
          cause: "The specified tolerated failure threshold was exceeded",
        }
      : { error: verdict.error, cause: verdict.cause },
  joinFailed(ctx, error, cause) {
    if (ctx.frame.mapRunArn === undefined) return;
    const details: { error?: string; cause?: string } = {};
    if (error !== undefined) details.error = error;
    if (cause !== undefined) details.cause = cause;
    ctx.record("MapRunFailed", details);
  },
  collected,
  onTaskSucceeded(ctx, state, output) {
    const purpose = purposeOf(ctx);
    if (purpose === "itemReader") {
      guarded(ctx, state, () => {
        // Many items may come by reference (core/payload-ref.ts): read into it.
        const items = readInto(output);
        if (!Array.isArray(items)) {
          throw new StatesError(
            "States.ItemReaderFailed",
            `${ctx.causePrefix()} The ItemReader did not give an array of items.`,
          );
        }
        iterate(ctx, state, items, readerEffectiveInput(ctx, state, ctx.frame.input));
      });
    } else if (purpose === "resultWriter") {
      if (ctx.frame.mapRunArn !== undefined) ctx.record("MapRunSucceeded");
      succeedChildren(ctx, state, output);
    }
  },
  onTaskFailed(ctx, state, error, cause) {
    const purpose = purposeOf(ctx);
    if (purpose === undefined) return;
    const name = purpose === "itemReader" ? "States.ItemReaderFailed" : "States.ResultWriterFailed";
    const why = error === name ? (cause ?? "") : `${error}: ${cause ?? ""}`;
    ownTaskFailed(ctx, state, name, `${ctx.causePrefix()} ${why}`.trim());
  },
});

export { mapRunId };

/**
 * UpdateMapRun: the running Map Run takes its new concurrency and failure
 * tolerance; a wider window starts the children it has room for now.
 */
export function updateMapRun(
  ctx: StepContext,
  event: Extract<RunEvent, { type: "MapRunUpdated" }>,
): void {
  const phase = ctx.frame.phase;
  if (phase.kind !== "children") return;
  const join: Join = { ...phase.join };
  if (event.maxConcurrency !== undefined) join.maxConcurrency = Math.max(0, event.maxConcurrency);
  if (event.toleratedFailureCount !== undefined) {
    join.toleratedFailureCount = event.toleratedFailureCount;
  }
  if (event.toleratedFailurePercentage !== undefined) {
    join.toleratedFailurePercentage = event.toleratedFailurePercentage;
  }
  const next = join.chunks
    ? startChunks(ctx, ctx.currentState as MapState, join)
    : continueJoin(ctx, join, childScopesOf(ctx));
  ctx.setPhase({ kind: "children", join: next });
}
