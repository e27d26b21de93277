import type { ChildExecution } from "../core/run.js";

/**
 * A Distributed Map's items run as child executions of its Map Run, as on AWS:
 * each has an ARN under the Map Run's own state machine ARN (`<machine>/<label>`)
 * and a history of its own. Pure: the names follow from the Map Run's ARN and the
 * item's index alone, so a redelivered or replayed step names the same child, and
 * a redriven Map Run finds its children under the names they had.
 */

const MAP_RUN_ARN = /^arn:([^:]+):states:([^:]*):([^:]*):mapRun:([^:]+):([^:]+)$/;

/**
 * The child execution of item (or batch) `index` of the Map Run `mapRunArn`
 * (`arn:<partition>:states:<region>:<account>:mapRun:<machine>/<label>:<id>`):
 * `arn:<partition>:states:<region>:<account>:execution:<machine>/<label>:<id>-<index>`.
 * Undefined for an ARN not of that shape (none that map-io-resources.ts makes).
 */
export function mapRunChildExecution(mapRunArn: string, index: number): ChildExecution | undefined {
  const match = MAP_RUN_ARN.exec(mapRunArn);
  if (!match) return undefined;
  const [, partition, region, account, qualified, id] = match;
  const name = `${id}-${index}`;
  return {
    arn: `arn:${partition}:states:${region}:${account}:execution:${qualified}:${name}`,
    name,
    mapRunArn,
  };
}

/** The Map Run id and the item index a child execution's name holds (`<id>-<index>`). */
export function parseChildExecutionName(
  name: string,
): { mapRunId: string; index: number } | undefined {
  const match = /^(.+)-(\d+)$/.exec(name);
  if (!match) return undefined;
  return { mapRunId: match[1]!, index: Number(match[2]) };
}

/**
 * Whether an execution ARN (or its short id, `<machine>/<label>:<name>`) is a Map
 * Run's child: its state machine part is qualified by a Map's label, which no
 * state machine name can contain (`/` is not allowed in one).
 */
export function isChildExecutionId(id: string): boolean {
  const at = id.indexOf(":execution:");
  const rest = at >= 0 ? id.slice(at + ":execution:".length) : id;
  const colon = rest.indexOf(":");
  return colon > 0 && rest.slice(0, colon).includes("/");
}
