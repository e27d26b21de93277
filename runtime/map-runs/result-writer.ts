import type { Json } from "../../engine/core/json.js";
import {
  mapRunId,
  RESULT_WRITER_RESOURCE,
  type ResultWriterRequest,
} from "../../engine/states/map-io-resources.js";
import { TaskError, type TaskRequest, type TaskRunner } from "../../task-runners/runner.js";
import {
  itemStoreClient,
  s3ErrorText,
  s3Url,
  type ItemStore,
  type ItemStoreSettings,
} from "./s3.js";

const FAILED = "States.ResultWriterFailed";

type Status = "SUCCEEDED" | "FAILED" | "PENDING";

/** One result file: its key and what goes in it. */
export interface ResultFile {
  status: Status;
  key: string;
  body: string;
}

/**
 * The ResultWriter of a Distributed Map, at the edge (AWS "ResultWriter (Map)"):
 * under `<Prefix>/<map run id>/`, `SUCCEEDED_0.json` and `FAILED_0.json` when
 * some child ended so (never `PENDING_0.json`: every child has ended when results
 * are written), then `manifest.json` naming them. The state's output is where the
 * manifest is: `{"MapRunArn", "ResultWriterDetails": {"Bucket", "Key"}}`.
 */
export function resultWriterRunner(settings: ItemStoreSettings): TaskRunner {
  let store: Promise<ItemStore> | undefined;
  return {
    name: "map-result-writer",
    handles: (resource) => resource === RESULT_WRITER_RESOURCE,
    async run(request: TaskRequest): Promise<Json> {
      store ??= itemStoreClient(settings);
      store.catch(() => (store = undefined));
      return writeResults(
        await store,
        request.input as unknown as ResultWriterRequest,
        request.executionId,
        request.signal,
      );
    },
  };
}

/** The folder a Map Run's results go in: `<Prefix>/<map run id>/` (no leading slash for an empty prefix). */
export function resultFolder(prefix: string, mapRunArn: string): string {
  const base = prefix === "" ? "" : prefix.endsWith("/") ? prefix : `${prefix}/`;
  return `${base}${mapRunId(mapRunArn)}/`;
}

/**
 * The result files' contents. NONE: each child as AWS describes a child
 * execution (its output as JSON text, status, ARN and name); COMPACT: the
 * outputs as they are; FLATTEN: array outputs flattened one level. A child that
 * failed is always written whole (AWS: as NONE).
 */
export function resultFiles(request: ResultWriterRequest, executionArn: string): ResultFile[] {
  const folder = resultFolder(request.Prefix, request.MapRunArn);
  const ext = request.OutputType === "JSONL" ? "jsonl" : "json";
  const byStatus: Record<Status, Json[]> = { SUCCEEDED: [], FAILED: [], PENDING: [] };
  // Children are iterations of the parent: named `<map run id>_<index>` under the Map Run's label.
  const childName = (index: number) => `${mapRunId(request.MapRunArn)}_${index}`;
  const childArn = (index: number) =>
    request.MapRunArn.replace(":mapRun:", ":execution:").replace(/:[^:]*$/, `:${childName(index)}`);
  const machineArn = executionArn.replace(":execution:", ":stateMachine:").replace(/:[^:]*$/, "");
  request.Results.forEach((result, index) => {
    const whole = {
      ExecutionArn: childArn(index),
      Name: childName(index),
      StateMachineArn: machineArn,
      Status: result.Status,
      ...(result.Status === "SUCCEEDED"
        ? { Output: JSON.stringify(result.Output), OutputDetails: { Included: true } }
        : {}),
      RedriveCount: 0,
      RedriveStatus: "NOT_REDRIVABLE",
    };
    if (result.Status !== "SUCCEEDED" || request.Transformation === "NONE") {
      byStatus[result.Status].push(whole);
    } else if (request.Transformation === "FLATTEN" && Array.isArray(result.Output)) {
      byStatus.SUCCEEDED.push(...result.Output);
    } else {
      byStatus.SUCCEEDED.push(result.Output);
    }
  });
  // AWS writes a file only for a status some child ended in.
  const statuses = (["SUCCEEDED", "FAILED", "PENDING"] as const).filter(
    (status) => byStatus[status].length > 0,
  );
  return statuses.map((status) => ({
    status,
    key: `${folder}${status}_0.${ext}`,
    body:
      request.OutputType === "JSONL"
        ? byStatus[status].map((value) => `${JSON.stringify(value)}\n`).join("")
        : JSON.stringify(byStatus[status]),
  }));
}

/** The manifest AWS writes beside the result files. */
export function manifest(request: ResultWriterRequest, files: ResultFile[]): Json {
  const entries = (status: Status) =>
    files
      .filter((file) => file.status === status)
      .map((file) => ({ Key: file.key, Size: Buffer.byteLength(file.body) }));
  return {
    DestinationBucket: request.Bucket,
    MapRunArn: request.MapRunArn,
    ResultFiles: {
      FAILED: entries("FAILED"),
      PENDING: entries("PENDING"),
      SUCCEEDED: entries("SUCCEEDED"),
    },
  };
}

export async function writeResults(
  { client, s3 }: ItemStore,
  request: ResultWriterRequest,
  executionArn: string,
  signal?: AbortSignal,
): Promise<Json> {
  const files = resultFiles(request, executionArn);
  const manifestKey = `${resultFolder(request.Prefix, request.MapRunArn)}manifest.json`;
  const put = async (key: string, body: string, type: string) => {
    try {
      await client.send(
        new s3.PutObjectCommand({
          Bucket: request.Bucket,
          Key: key,
          Body: Buffer.from(body),
          ContentType: type,
        }),
        signal ? { abortSignal: signal } : {},
      );
    } catch (err) {
      throw new TaskError(
        FAILED,
        `Could not write ${s3Url(request.Bucket, key)}: ${s3ErrorText(err)}`,
      );
    }
  };
  const type = request.OutputType === "JSONL" ? "application/jsonl" : "application/json";
  for (const file of files) await put(file.key, file.body, type);
  await put(manifestKey, JSON.stringify(manifest(request, files)), "application/json");
  return {
    MapRunArn: request.MapRunArn,
    ResultWriterDetails: { Bucket: request.Bucket, Key: manifestKey },
  };
}
