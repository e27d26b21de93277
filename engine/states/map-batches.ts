import type { MapState } from "../core/definition.js";
import { StatesError } from "../core/errors.js";
import type { Json } from "../core/json.js";
import { readStatePath } from "../io/jsonpath-io.js";
import { evaluatePayloadTemplate } from "../io/payload-template.js";
import type { StepContext } from "../step-context.js";

/**
 * ItemBatcher (AWS "ItemBatcher (Map)"): groups items into batches of at most
 * `MaxItemsPerBatch` items and `MaxInputBytesPerBatch` bytes; each child gets
 * `{"Items": [...], "BatchInput": ...}`.
 */
export function batchItems(ctx: StepContext, state: MapState, items: Json[], raw: Json): Json[] {
  const batcher = state.ItemBatcher ?? {};
  const limit = (field: string): number | undefined => {
    const literal = batcher[field];
    if (typeof literal === "number") return literal;
    const path = batcher[`${field}Path`];
    if (typeof path !== "string") return undefined;
    const found = readStatePath(ctx, path, ctx.pathScope(raw));
    if (
      !found.found ||
      typeof found.value !== "number" ||
      !Number.isInteger(found.value) ||
      found.value < 1
    ) {
      throw new StatesError(
        "States.Runtime",
        `${ctx.causePrefix()} The ${field}Path field refers to an invalid value: ${path}`,
      );
    }
    return found.value;
  };
  const maxItems = limit("MaxItemsPerBatch") ?? Number.POSITIVE_INFINITY;
  const maxBytes = limit("MaxInputBytesPerBatch") ?? 256 * 1024;
  const batchInput =
    batcher.BatchInput !== undefined
      ? evaluatePayloadTemplate(batcher.BatchInput, ctx.pathScope(raw), ctx.random, "BatchInput")
      : undefined;
  const batches: Json[] = [];
  let current: Json[] = [];
  let bytes = 0;
  const flush = (): void => {
    if (current.length === 0) return;
    batches.push(
      batchInput === undefined ? { Items: current } : { Items: current, BatchInput: batchInput },
    );
    current = [];
    bytes = 0;
  };
  for (const item of items) {
    const size = JSON.stringify(item).length;
    if (current.length >= maxItems || (current.length > 0 && bytes + size > maxBytes)) flush();
    current.push(item);
    bytes += size;
  }
  flush();
  return batches;
}
