import type { HistoryEvent } from "../api/types.js";
import { detailsOf } from "../status/derive.js";

/**
 * The child execution a `states:startExecution` task of one state entry started
 * (runtime/children/): the `ExecutionArn` of its task's output, the latest
 * attempt's. TaskSubmitted has it as soon as a `.sync`, `.sync:2` or
 * `.waitForTaskToken` child started; TaskSucceeded for fire and forget and `.sync`
 * (a `.waitForTaskToken` task's result is the callback's, without it). Only a
 * standard execution's ARN (`…:execution:…`): an EXPRESS child keeps no record.
 */
export function childExecutionOf(
  events: readonly HistoryEvent[],
  entryOfEvent: ReadonlyMap<number, number>,
  entryId: number,
): string | undefined {
  let found: string | undefined;
  for (const event of events) {
    if (event.type !== "TaskSubmitted" && event.type !== "TaskSucceeded") continue;
    if (entryOfEvent.get(event.id) !== entryId) continue;
    const details = detailsOf(event);
    if (details.resourceType !== "states") continue;
    if (typeof details.resource !== "string" || !details.resource.startsWith("startExecution"))
      continue;
    const arn = executionArnOf(details.output);
    if (arn !== undefined) found = arn;
  }
  return found;
}

function executionArnOf(output: unknown): string | undefined {
  if (typeof output !== "string") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(output);
  } catch {
    return undefined;
  }
  const arn =
    value !== null && typeof value === "object"
      ? (value as Record<string, unknown>).ExecutionArn
      : undefined;
  return typeof arn === "string" && /^arn:[^:]+:states:[^:]*:[^:]*:execution:/.test(arn)
    ? arn
    : undefined;
}
