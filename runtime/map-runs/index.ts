import type { TaskRunner } from "../../task-runners/runner.js";
import { itemReaderRunner } from "./item-reader.js";
import { resultWriterRunner } from "./result-writer.js";
import type { ItemStoreSettings } from "./s3.js";

export type { ItemStoreSettings } from "./s3.js";

/**
 * A Distributed Map's I/O at the edge, as task runners of the worker: the
 * engine asks for items and for results to be written with tasks on internal
 * resources (engine/states/map-io-resources.ts); these serve them on S3.
 */
export function mapRunRunners(settings: ItemStoreSettings = { region: "us-east-1" }): TaskRunner[] {
  return [itemReaderRunner(settings), resultWriterRunner(settings)];
}
