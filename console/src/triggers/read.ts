import type { Json } from "../api/types.js";

/**
 * Reading the trigger routes' answers (`/v1/schedules`, `/v1/rules`, `/v1/events`).
 * Their response schemas live in the API's plugins, not in api/response-schemas.ts,
 * so api/shapes.ts derives no type for them yet; rather than declare those shapes by
 * hand here, the pages read the JSON they are sent through these checked accessors
 * (a missing or mistyped field reads as undefined, never throws). Pure.
 */

export type JsonObject = { [key: string]: Json };

export function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `{ items: [...] }` → the object items. */
export function itemsOf(answer: Json | undefined): JsonObject[] {
  if (!isObject(answer) || !Array.isArray(answer.items)) return [];
  return answer.items.filter(isObject);
}

export function text(o: Json | undefined, key: string): string | undefined {
  if (!isObject(o)) return undefined;
  const v = o[key];
  return typeof v === "string" ? v : undefined;
}

export function num(o: Json | undefined, key: string): number | undefined {
  if (!isObject(o)) return undefined;
  const v = o[key];
  return typeof v === "number" ? v : undefined;
}

export function obj(o: Json | undefined, key: string): JsonObject | undefined {
  if (!isObject(o)) return undefined;
  const v = o[key];
  return isObject(v) ? v : undefined;
}

/** A target as people read it: `machine`, `machine:alias` or `machine v3`. */
export function targetText(target: JsonObject | undefined): string {
  const machine = text(target, "stateMachine") ?? "?";
  const alias = text(target, "alias");
  const version = num(target, "version");
  return alias ? `${machine}:${alias}` : version !== undefined ? `${machine} v${version}` : machine;
}

/**
 * An event pattern in one line: `source = a, b · detail-type = X · detail.kind = …`.
 * Nested keys are joined with dots; a matcher that is not a plain value list reads as `…`.
 */
export function patternSummary(pattern: JsonObject | undefined, max = 3): string {
  if (!pattern) return "—";
  const parts: string[] = [];
  const walk = (o: JsonObject, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (Array.isArray(v)) {
        const plain = v.every((x) => typeof x !== "object" || x === null);
        parts.push(`${path} = ${plain ? v.map((x) => String(x)).join(", ") : "…"}`);
      } else if (isObject(v)) walk(v, path);
      else parts.push(`${path} = ${String(v)}`);
    }
  };
  walk(pattern, "");
  if (parts.length === 0) return "any event";
  return parts.length > max
    ? `${parts.slice(0, max).join(" · ")} · +${parts.length - max}`
    : parts.join(" · ");
}
