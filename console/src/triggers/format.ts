import type { Json } from "../api/types.js";

/** How the trigger pages write targets and event patterns for people. Pure. */

/** A target as people read it: `machine`, `machine:alias` or `machine v3`. */
export function targetText(target: { stateMachine: string; version?: number; alias?: string }) {
  const { stateMachine, alias, version } = target;
  return alias
    ? `${stateMachine}:${alias}`
    : version !== undefined
      ? `${stateMachine} v${version}`
      : stateMachine;
}

/**
 * An event pattern in one line: `source = a, b · detail-type = X · detail.kind = …`.
 * Nested keys are joined with dots; a matcher that is not a plain value list reads as `…`.
 */
export function patternSummary(pattern: { [key: string]: Json }, max = 3): string {
  const parts: string[] = [];
  const walk = (o: { [key: string]: Json }, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (Array.isArray(v)) {
        const plain = v.every((x) => typeof x !== "object" || x === null);
        parts.push(`${path} = ${plain ? v.map((x) => String(x)).join(", ") : "…"}`);
      } else if (typeof v === "object" && v !== null) walk(v, path);
      else parts.push(`${path} = ${String(v)}`);
    }
  };
  walk(pattern, "");
  if (parts.length === 0) return "any event";
  return parts.length > max
    ? `${parts.slice(0, max).join(" · ")} · +${parts.length - max}`
    : parts.join(" · ");
}

/** How many keys a JSON value has, in words (`3 keys`), or `JSON` when it is no object. */
export function keysText(value: Json): string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "JSON";
  const n = Object.keys(value).length;
  return `${n} key${n === 1 ? "" : "s"}`;
}
