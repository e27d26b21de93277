import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { Json, JsonObject } from "../../engine/core/json.js";
import {
  ITEM_READER_RESOURCE,
  type ItemReaderRequest,
} from "../../engine/states/map-io-resources.js";
import { TaskError, type TaskRequest, type TaskRunner } from "../../task-runners/runner.js";
import {
  atPointer,
  CSV_DELIMITERS,
  CsvItems,
  CsvRowParser,
  ItemParseError,
  jsonLine,
  LineSplitter,
  type CsvDelimiterName,
} from "./item-parsers.js";
import {
  itemStoreClient,
  s3ErrorText,
  s3Url,
  type ItemStore,
  type ItemStoreSettings,
} from "./s3.js";

const FAILED = "States.ItemReaderFailed";

/**
 * The ItemReader of a Distributed Map, at the edge: the engine asks for the items
 * with a task on `ITEM_READER_RESOURCE` (engine/states/map.ts) and gets them back
 * as the task's result. `s3:getObject` objects are streamed (JSONL and CSV line by
 * line; only the items are kept, never the object's text whole); `s3:listObjectsV2`
 * lists the objects under a prefix, page by page. Every failure is
 * `States.ItemReaderFailed` with the object (and line) in its cause.
 */
export function itemReaderRunner(settings: ItemStoreSettings): TaskRunner {
  let store: Promise<ItemStore> | undefined;
  return {
    name: "map-item-reader",
    handles: (resource) => resource === ITEM_READER_RESOURCE,
    async run(request: TaskRequest): Promise<Json> {
      store ??= itemStoreClient(settings);
      store.catch(() => (store = undefined));
      return readItems(await store, request.input as unknown as ItemReaderRequest, request.signal);
    },
  };
}

export async function readItems(
  { client, s3 }: ItemStore,
  request: ItemReaderRequest,
  signal?: AbortSignal,
): Promise<Json[]> {
  const args = (request.Parameters ?? {}) as JsonObject;
  const bucket = args.Bucket;
  if (typeof bucket !== "string" || bucket === "") {
    throw new TaskError(FAILED, "The ItemReader needs a Bucket (a string).");
  }
  const max = request.MaxItems ?? Number.POSITIVE_INFINITY;
  if (request.Resource.endsWith(":s3:listObjectsV2")) {
    const prefix = typeof args.Prefix === "string" ? args.Prefix : undefined;
    return listObjects({ client, s3 }, bucket, prefix, max, signal);
  }
  const key = args.Key;
  if (typeof key !== "string" || key === "") {
    throw new TaskError(FAILED, "The ItemReader needs a Key (a string) for s3:getObject.");
  }
  const version = typeof args.VersionId === "string" ? args.VersionId : undefined;
  const config = request.ReaderConfig ?? {};
  const url = s3Url(bucket, key);
  let body: Readable;
  try {
    const got = await client.send(
      new s3.GetObjectCommand({
        Bucket: bucket,
        Key: key,
        ...(version !== undefined ? { VersionId: version } : {}),
      }),
      signal ? { abortSignal: signal } : {},
    );
    body = got.Body as Readable;
  } catch (err) {
    throw new TaskError(FAILED, `Could not read ${url}: ${s3ErrorText(err)}`);
  }
  try {
    const type = config.InputType ?? "JSON";
    if (type === "JSONL") return await readJsonl(body, max);
    if (type === "CSV") return await readCsv(body, config, max);
    if (type === "JSON") return await readJson(body, url, config.ItemsPointer, max);
    throw new TaskError(FAILED, `The InputType ${String(type)} is not supported by Stepwise.`);
  } catch (err) {
    if (err instanceof TaskError) throw err;
    if (err instanceof ItemParseError) {
      throw new TaskError(FAILED, `${url} line ${err.line}: ${err.reason}`);
    }
    throw new TaskError(FAILED, `Could not read ${url}: ${s3ErrorText(err)}`);
  } finally {
    body.destroy();
  }
}

/** The object's text, decoded as UTF-8 chunk by chunk (a character split over chunks stays whole). */
async function* textChunks(body: Readable): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8");
  for await (const chunk of body) {
    const text = decoder.write(chunk as Buffer);
    if (text) yield text;
  }
  const rest = decoder.end();
  if (rest) yield rest;
}

async function readJsonl(body: Readable, max: number): Promise<Json[]> {
  const items: Json[] = [];
  const lines = new LineSplitter();
  const take = (batch: { line: number; text: string }[]): boolean => {
    for (const { line, text } of batch) {
      if (items.length >= max) return true;
      const item = jsonLine(text, line);
      if (item !== undefined) items.push(item);
    }
    return items.length >= max;
  };
  for await (const chunk of textChunks(body)) {
    if (take(lines.push(chunk))) return items;
  }
  take(lines.end());
  return items;
}

async function readCsv(
  body: Readable,
  config: NonNullable<ItemReaderRequest["ReaderConfig"]>,
  max: number,
): Promise<Json[]> {
  const delimiter = CSV_DELIMITERS[(config.CSVDelimiter ?? "COMMA") as CsvDelimiterName];
  if (delimiter === undefined) {
    throw new TaskError(FAILED, `Unknown CSVDelimiter ${String(config.CSVDelimiter)}.`);
  }
  const given = (config.CSVHeaderLocation ?? "FIRST_ROW") === "GIVEN";
  if (given && (!Array.isArray(config.CSVHeaders) || config.CSVHeaders.length === 0)) {
    throw new TaskError(FAILED, "CSVHeaderLocation GIVEN needs CSVHeaders.");
  }
  const parser = new CsvRowParser(delimiter);
  const rows = new CsvItems(given ? config.CSVHeaders : undefined);
  const items: Json[] = [];
  const take = (batch: ReturnType<CsvRowParser["push"]>): boolean => {
    for (const row of batch) {
      if (items.length >= max) return true;
      const item = rows.item(row);
      if (item !== undefined) items.push(item);
    }
    return items.length >= max;
  };
  for await (const chunk of textChunks(body)) {
    if (take(parser.push(chunk))) return items;
  }
  take(parser.end());
  return items;
}

/** A JSON object is one value: read whole, then its array (at `ItemsPointer`). */
async function readJson(
  body: Readable,
  url: string,
  pointer: string | undefined,
  max: number,
): Promise<Json[]> {
  let text = "";
  for await (const chunk of textChunks(body)) text += chunk;
  let doc: Json;
  try {
    doc = JSON.parse(text) as Json;
  } catch (err) {
    throw new TaskError(
      FAILED,
      `${url} is not JSON (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  const items = pointer !== undefined ? atPointer(doc, pointer) : doc;
  if (!Array.isArray(items)) {
    throw new TaskError(
      FAILED,
      pointer !== undefined
        ? `The ItemsPointer ${pointer} does not point at an array in ${url}.`
        : `${url} does not hold a JSON array (use ItemsPointer for an array inside an object).`,
    );
  }
  return items.length > max ? items.slice(0, max) : items;
}

/** `s3:listObjectsV2`: one item per object, as AWS gives them (LastModified in epoch seconds). */
async function listObjects(
  { client, s3 }: ItemStore,
  bucket: string,
  prefix: string | undefined,
  max: number,
  signal?: AbortSignal,
): Promise<Json[]> {
  const items: Json[] = [];
  let token: string | undefined;
  do {
    let page;
    try {
      page = await client.send(
        new s3.ListObjectsV2Command({
          Bucket: bucket,
          ...(prefix !== undefined ? { Prefix: prefix } : {}),
          ...(token !== undefined ? { ContinuationToken: token } : {}),
        }),
        signal ? { abortSignal: signal } : {},
      );
    } catch (err) {
      throw new TaskError(
        FAILED,
        `Could not list ${s3Url(bucket, prefix ?? "")}: ${s3ErrorText(err)}`,
      );
    }
    for (const object of page.Contents ?? []) {
      if (items.length >= max) return items;
      items.push({
        Etag: object.ETag ?? "",
        Key: object.Key ?? "",
        LastModified: object.LastModified ? Math.floor(object.LastModified.getTime() / 1000) : 0,
        Size: object.Size ?? 0,
        StorageClass: object.StorageClass ?? "STANDARD",
      });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return items;
}
