import type { MapState, TaskState } from "../core/definition.js";
import { StatesError } from "../core/errors.js";
import type { Json, JsonObject } from "../core/json.js";
import { io } from "../io/index.js";
import { applyInputPath, readStatePath } from "../io/jsonpath-io.js";
import type { StepContext } from "../step-context.js";

/**
 * A Distributed Map's I/O (ItemReader, ResultWriter) happens at the edge, never
 * in the pure step: the Map asks the driver for it with a `RunTask` effect on one
 * of these internal resources and gets the answer back as the task's result
 * (runtime/map-runs/ serves them on S3). No Task state can name them.
 */
export const ITEM_READER_RESOURCE = "stepwise:internal:map-item-reader";
export const RESULT_WRITER_RESOURCE = "stepwise:internal:map-result-writer";

export type MapIoPurpose = "itemReader" | "resultWriter";

/** What the ItemReader task is given: the reader's evaluated fields. */
export interface ItemReaderRequest {
  /** `arn:aws:states:::s3:getObject` or `arn:aws:states:::s3:listObjectsV2`. */
  Resource: string;
  /** Bucket, Key (getObject) or Prefix (listObjectsV2), VersionId. */
  Parameters: JsonObject;
  ReaderConfig?: {
    InputType?: string;
    CSVHeaderLocation?: string;
    CSVHeaders?: string[];
    CSVDelimiter?: string;
    ItemsPointer?: string;
  };
  MaxItems?: number;
}

export type Transformation = "NONE" | "COMPACT" | "FLATTEN";

/** What the ResultWriter task is given: where to write, how, and the children's results. */
export interface ResultWriterRequest {
  Bucket: string;
  Prefix: string;
  MapRunArn: string;
  Transformation: Transformation;
  OutputType: "JSON" | "JSONL";
  /** Of every child, in index order: SUCCEEDED with its output, else FAILED. */
  Results: { Status: "SUCCEEDED" | "FAILED"; Output: Json }[];
}

/** `DISTRIBUTED` in the Map's ProcessorConfig. */
export function isDistributed(state: MapState): boolean {
  // `Iterator` is ItemProcessor's legacy name; AWS takes a ProcessorConfig in either.
  return (state.ItemProcessor ?? state.Iterator)?.ProcessorConfig?.Mode === "DISTRIBUTED";
}

const READER_RESOURCES = new Set([
  "arn:aws:states:::s3:getObject",
  "arn:aws:states:::s3:listObjectsV2",
]);

/**
 * The Map Run's ARN (AWS: `arn:aws:states:<region>:<account>:mapRun:<machine>/<label>:<id>`),
 * from the execution's ARN, the Map's Label (else its name) and a UUID from the
 * run's random stream (replay draws the same).
 */
export function newMapRunArn(ctx: StepContext, state: MapState): string {
  const id = ctx.random.uuid();
  const label =
    typeof state.Label === "string" && state.Label !== "" ? state.Label : ctx.frame.name;
  const match = /^arn:aws:states:([^:]*):([^:]*):execution:([^:]+):/.exec(
    ctx.execution.executionId,
  );
  const [region, account, machine] = match
    ? [match[1], match[2], match[3]]
    : ["local", "000000000000", ctx.execution.stateMachineName];
  return `arn:aws:states:${region}:${account}:mapRun:${machine}/${label}:${id}`;
}

/** The id of a Map Run: the last part of its ARN (the folder ResultWriter writes into). */
export function mapRunId(arn: string): string {
  return arn.slice(arn.lastIndexOf(":") + 1);
}

/** A pseudo Task whose Parameters/Arguments are the holder's: evaluated as a Task's would be. */
function argumentsOf(ctx: StepContext, state: MapState, holder: JsonObject, raw: Json): Json {
  const pseudo = {
    Type: "Task",
    Resource: "",
    ...(state.QueryLanguage !== undefined ? { QueryLanguage: state.QueryLanguage } : {}),
    ...(state.InputPath !== undefined ? { InputPath: state.InputPath } : {}),
    ...(holder.Parameters !== undefined ? { Parameters: holder.Parameters } : {}),
    ...(holder.Arguments !== undefined ? { Arguments: holder.Arguments } : {}),
  } as unknown as TaskState;
  return io(ctx, state).arguments(ctx, pseudo, raw);
}

function readerFailed(ctx: StepContext, message: string): StatesError {
  return new StatesError("States.ItemReaderFailed", `${ctx.causePrefix()} ${message}`);
}

/** The ItemReader's request, evaluated against the state input. */
export function itemReaderRequest(ctx: StepContext, state: MapState, raw: Json): ItemReaderRequest {
  const reader = state.ItemReader!;
  const resource = reader.Resource;
  if (typeof resource !== "string" || !READER_RESOURCES.has(resource)) {
    throw readerFailed(
      ctx,
      `The ItemReader resource '${String(resource)}' is not supported: use arn:aws:states:::s3:getObject or arn:aws:states:::s3:listObjectsV2.`,
    );
  }
  const args = argumentsOf(ctx, state, reader, raw);
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    throw readerFailed(ctx, "The ItemReader's Parameters must be an object.");
  }
  const request: ItemReaderRequest = { Resource: resource, Parameters: args };
  const config = reader.ReaderConfig;
  if (
    config !== undefined &&
    config !== null &&
    typeof config === "object" &&
    !Array.isArray(config)
  ) {
    const { MaxItems, MaxItemsPath, ...rest } = config as JsonObject;
    request.ReaderConfig = rest as ItemReaderRequest["ReaderConfig"];
    const max = maxItems(ctx, state, MaxItems, MaxItemsPath, raw);
    if (max !== undefined && max > 0) request.MaxItems = max;
  }
  return request;
}

/** `MaxItems` (a number, or JSONata), or `MaxItemsPath`; 0 or absent: no limit. */
function maxItems(
  ctx: StepContext,
  state: MapState,
  literal: Json | undefined,
  path: Json | undefined,
  raw: Json,
): number | undefined {
  if (typeof literal === "number") return literal;
  if (typeof literal === "string") {
    const pseudo = { ...state, MaxConcurrency: literal } as MapState;
    return io(ctx, state).number(ctx, pseudo, "MaxConcurrency", raw);
  }
  if (typeof path !== "string") return undefined;
  const found = readStatePath(ctx, path, ctx.pathScope(applyInputPath(ctx, state.InputPath, raw)));
  if (
    !found.found ||
    typeof found.value !== "number" ||
    !Number.isInteger(found.value) ||
    found.value < 0
  ) {
    throw new StatesError(
      "States.Runtime",
      `${ctx.causePrefix()} The MaxItemsPath field refers to an invalid value: ${path}`,
    );
  }
  return found.value;
}

/** The effective input the items' ItemSelector sees: the state input (after InputPath in JSONPath). */
export function readerEffectiveInput(ctx: StepContext, state: MapState, raw: Json): Json {
  return ctx.language(state) === "JSONata" ? raw : applyInputPath(ctx, state.InputPath, raw);
}

function writerFailed(ctx: StepContext, message: string): StatesError {
  return new StatesError("States.ResultWriterFailed", `${ctx.causePrefix()} ${message}`);
}

/** The ResultWriter's Transformation and OutputType (AWS's defaults: NONE to S3, JSON). */
export function writerConfig(
  ctx: StepContext,
  state: MapState,
): { transformation: Transformation; outputType: "JSON" | "JSONL" } {
  const writer = state.ResultWriter!;
  const config = (writer.WriterConfig ?? {}) as JsonObject;
  const transformation =
    config.Transformation ?? (writer.Resource !== undefined ? "NONE" : "COMPACT");
  const outputType = config.OutputType ?? "JSON";
  if (transformation !== "NONE" && transformation !== "COMPACT" && transformation !== "FLATTEN") {
    throw writerFailed(
      ctx,
      `Unknown WriterConfig.Transformation ${JSON.stringify(transformation)}.`,
    );
  }
  if (outputType !== "JSON" && outputType !== "JSONL") {
    throw writerFailed(ctx, `Unknown WriterConfig.OutputType ${JSON.stringify(outputType)}.`);
  }
  return { transformation, outputType };
}

/** Where the ResultWriter writes: Bucket and Prefix, evaluated against the state input. */
export function resultWriterTarget(
  ctx: StepContext,
  state: MapState,
  raw: Json,
): { bucket: string; prefix: string } | undefined {
  const writer = state.ResultWriter!;
  if (writer.Resource === undefined) return undefined;
  if (writer.Resource !== "arn:aws:states:::s3:putObject") {
    throw writerFailed(
      ctx,
      `The ResultWriter resource '${String(writer.Resource)}' is not supported: use arn:aws:states:::s3:putObject.`,
    );
  }
  const args = argumentsOf(ctx, state, writer, raw);
  const bucket =
    args !== null && typeof args === "object" && !Array.isArray(args) ? args.Bucket : undefined;
  if (typeof bucket !== "string" || bucket === "") {
    throw writerFailed(ctx, "The ResultWriter needs a Bucket (a string).");
  }
  const prefix = (args as JsonObject).Prefix;
  return { bucket, prefix: typeof prefix === "string" ? prefix : "" };
}

/**
 * The children's outputs as the state's output when the ResultWriter only
 * formats them (WriterConfig without Resource): COMPACT as they are, FLATTEN with
 * array outputs flattened one level.
 */
export function transformResults(outputs: Json[], transformation: Transformation): Json[] {
  if (transformation !== "FLATTEN") return outputs;
  return outputs.flatMap((output) => (Array.isArray(output) ? output : [output]));
}
