import type { Json } from "../../../engine/core/json.js";
import { invalid } from "../errors.js";
import { checkPattern, type EventPattern } from "./event-pattern.js";

/**
 * A rule: an EventBridge event pattern and the state machine a matching event
 * starts, with what the execution is given: the whole event (default), a part of it
 * (`inputPath`, `$.detail.order`), a constant (`input`), or a template
 * (`inputTemplate`: a JSON value whose strings `<$.path>` are replaced by the value at
 * that path of the event, and whose longer strings have them replaced as text).
 */
export interface RuleInput {
  eventPattern: EventPattern;
  target: {
    stateMachine: string;
    version?: number;
    alias?: string;
    input?: Json;
    inputPath?: string;
    inputTemplate?: Json;
  };
  state?: "ENABLED" | "DISABLED";
  description?: string;
}

export interface RuleDefinition extends RuleInput {
  name: string;
  state: "ENABLED" | "DISABLED";
  createdAt: string;
  updatedAt: string;
}

/** Rule names: the executions they start are named `<rule>-<event id>` (36), within AWS's 80. */
export const RULE_NAME_PATTERN = "^[0-9A-Za-z_.-]{1,43}$";

const PATH = /^\$((\.[A-Za-z_$][\w$-]*)|(\[\d+\])|(\['[^']*'\]))*$/;

export function ruleDefinition(
  name: string,
  input: RuleInput,
  now: number,
  createdAt?: string,
): RuleDefinition {
  const problems = checkPattern(input.eventPattern);
  if (problems.length > 0) {
    const first = problems[0]!;
    throw invalid(
      `/eventPattern${first.pointer}`,
      `malformed event pattern at '${first.pointer || "/"}': ${first.message}`,
    );
  }
  const { target } = input;
  const given = ["input", "inputPath", "inputTemplate"].filter((k) => k in target);
  if (given.length > 1)
    throw invalid(`/target/${given[1]}`, `a target takes one of input, inputPath, inputTemplate`);
  if (target.version !== undefined && target.alias !== undefined)
    throw invalid("/target/alias", "a target names a version or an alias, not both");
  if (target.inputPath !== undefined && !PATH.test(target.inputPath))
    throw invalid("/target/inputPath", `'${target.inputPath}' is not a path like $.detail.order`);
  return {
    ...input,
    name,
    state: input.state ?? "ENABLED",
    createdAt: createdAt ?? new Date(now).toISOString(),
    updatedAt: new Date(now).toISOString(),
  };
}

/** The input of the execution an event starts (see RuleInput). */
export function ruleInput(target: RuleInput["target"], event: Json): Json {
  if (target.input !== undefined) return target.input;
  if (target.inputPath !== undefined) return readPath(event, target.inputPath) ?? null;
  if (target.inputTemplate !== undefined) return fillTemplate(target.inputTemplate, event);
  return event;
}

function fillTemplate(template: Json, event: Json): Json {
  if (typeof template === "string") {
    const whole = /^<(\$[^<>]*)>$/.exec(template);
    if (whole) return readPath(event, whole[1]!) ?? null;
    return template.replace(/<(\$[^<>]*)>/g, (_, path: string) => {
      const value = readPath(event, path);
      return typeof value === "string" ? value : JSON.stringify(value ?? null);
    });
  }
  if (Array.isArray(template)) return template.map((item) => fillTemplate(item, event));
  if (template !== null && typeof template === "object") {
    return Object.fromEntries(
      Object.entries(template).map(([k, v]) => [k, fillTemplate(v, event)]),
    );
  }
  return template;
}

/** A simple path (`$`, `.name`, `[n]`, `['name']`) into a value; undefined when absent. */
export function readPath(value: Json, path: string): Json | undefined {
  let current: Json | undefined = value;
  const steps = path.slice(1).match(/\.[A-Za-z_$][\w$-]*|\[\d+\]|\['[^']*'\]/g) ?? [];
  for (const step of steps) {
    if (current === undefined || current === null || typeof current !== "object") return undefined;
    const key = step.startsWith(".")
      ? step.slice(1)
      : step.startsWith("['")
        ? step.slice(2, -2)
        : Number(step.slice(1, -1));
    current = Array.isArray(current)
      ? typeof key === "number"
        ? current[key]
        : undefined
      : typeof key === "string"
        ? (current as Record<string, Json>)[key]
        : undefined;
  }
  return current;
}
