import { createHash } from "node:crypto";
import type { Json, JsonObject } from "../../engine/core/json.js";
import { isJsonObject } from "../../engine/core/json.js";
import { TaskError } from "../runner.js";

/**
 * `events:putEvents` into Stepwise's own event bus (STEPWISE_EVENTS_LOCAL=true):
 * the entries for the default bus (no `EventBusName`, `default`, or the default
 * bus's ARN `arn:aws:events:<region>:<account>:event-bus/default`) are published
 * by the injected `publishLocal` (the worker's: runtime/triggers/, as
 * `POST /v1/events` does), the others still go to EventBridge. This module knows
 * nothing of the runtime: the worker passes the function in (AwsRunnerOptions).
 *
 * Each local entry carries an `Id` derived from the task's `operationKey` and its
 * place in `Entries`, so a retried attempt is answered with the first EventIds and
 * publishes nothing twice (the bus remembers entry Ids for its retention).
 */

/** One entry as Stepwise's bus takes it (runtime/triggers/events/event-bus.ts `PutEventsEntry`). */
export interface LocalEventEntry {
  Source: string;
  DetailType: string;
  /** A JSON object, as text. */
  Detail: string;
  Time?: string;
  Resources?: string[];
  Id: string;
}

export type LocalEventResult = { EventId: string } | { ErrorCode: string; ErrorMessage: string };

/** Publishes entries into Stepwise's bus, answering each in order; throws when the bus cannot take them. */
export type PublishLocal = (entries: LocalEventEntry[]) => Promise<LocalEventResult[]>;

/** EventBridge's limit on one PutEvents call. */
const MAX_ENTRIES = 10;

const DEFAULT_BUS_ARN = /^arn:aws[a-z-]*:events:[a-z0-9-]*:\d*:event-bus\/default$/;

/** Whether an entry is for the default bus, which Stepwise serves when STEPWISE_EVENTS_LOCAL=true. */
export function isDefaultBus(name: Json | undefined): boolean {
  return (
    name === undefined ||
    name === null ||
    name === "" ||
    name === "default" ||
    (typeof name === "string" && DEFAULT_BUS_ARN.test(name))
  );
}

/** The idempotency Id of entry `index` of a task's PutEvents (stable across the task's retries). */
export function localEntryId(operationKey: string, index: number): string {
  const digest = createHash("sha256").update(`${operationKey}\n${index}`).digest("hex");
  return `states-putEvents-${digest}`;
}

/** An entry Stepwise's bus cannot take, answered as EventBridge answers it (the rest go on). */
function entryError(entry: JsonObject): LocalEventResult | undefined {
  for (const field of ["Source", "DetailType", "Detail"] as const) {
    const value = entry[field];
    if (typeof value !== "string" || value === "") {
      return { ErrorCode: "InvalidArgument", ErrorMessage: `Parameter ${field} is not valid.` };
    }
  }
  if (entry.Time !== undefined && typeof entry.Time !== "string") {
    return { ErrorCode: "InvalidArgument", ErrorMessage: "Parameter Time is not valid." };
  }
  return undefined;
}

function busEntry(entry: JsonObject, id: string): LocalEventEntry {
  const resources = Array.isArray(entry.Resources)
    ? entry.Resources.filter((r): r is string => typeof r === "string")
    : [];
  return {
    Source: entry.Source as string,
    DetailType: entry.DetailType as string,
    Detail: entry.Detail as string,
    ...(typeof entry.Time === "string" ? { Time: entry.Time } : {}),
    ...(resources.length > 0 ? { Resources: resources } : {}),
    Id: id,
  };
}

/**
 * PutEvents with the default bus's entries published locally. `input` is the SDK
 * input the integration built (Detail as text, Resources with the machine and
 * execution); `remote` sends the other entries to EventBridge (not called when
 * there are none). The answer is PutEvents': `Entries` in the request's order,
 * `FailedEntryCount`.
 */
export async function putEventsLocally(
  input: { Entries: Json[] },
  operationKey: string,
  publishLocal: PublishLocal,
  remote: (entries: Json[]) => Promise<JsonObject>,
): Promise<JsonObject> {
  const entries = input.Entries;
  if (entries.length === 0 || entries.length > MAX_ENTRIES) {
    throw new TaskError(
      "EventBridge.ValidationException",
      `events:putEvents takes 1 to ${MAX_ENTRIES} Entries, not ${entries.length}`,
    );
  }
  const results: (Json | undefined)[] = entries.map(() => undefined);
  const local: { index: number; entry: LocalEventEntry }[] = [];
  const others: { index: number; entry: Json }[] = [];
  entries.forEach((entry, index) => {
    if (isJsonObject(entry) && !isDefaultBus(entry.EventBusName)) {
      others.push({ index, entry });
      return;
    }
    const refused = isJsonObject(entry)
      ? entryError(entry)
      : { ErrorCode: "InvalidArgument", ErrorMessage: "An entry is not a JSON object." };
    if (refused) results[index] = refused;
    else
      local.push({
        index,
        entry: busEntry(entry as JsonObject, localEntryId(operationKey, index)),
      });
  });

  if (local.length > 0) {
    let answered: LocalEventResult[];
    try {
      answered = await publishLocal(local.map((l) => l.entry));
    } catch (err) {
      const e = err as { code?: string; message?: string };
      if (e.code === "InvalidRequest") {
        throw new TaskError(
          "EventBridge.ValidationException",
          `Stepwise's event bus: ${e.message}`,
        );
      }
      throw new TaskError(
        "EventBridge.InternalException",
        `Stepwise's event bus (STEPWISE_EVENTS_LOCAL=true) could not take the events: ${e.message ?? String(err)}`,
      );
    }
    local.forEach((l, i) => (results[l.index] = answered[i] ?? null));
  }

  let answer: JsonObject = {};
  if (others.length > 0) {
    answer = await remote(others.map((o) => o.entry));
    const sent = Array.isArray(answer.Entries) ? answer.Entries : [];
    others.forEach((o, i) => (results[o.index] = sent[i] ?? null));
  }
  const all = results.map((r) => r ?? {});
  const failed = all.filter((r) => isJsonObject(r) && r.ErrorCode !== undefined).length;
  return { ...answer, Entries: all, FailedEntryCount: failed };
}
