import type { Environment } from "./values.js";
import { VARIABLES } from "./variables.js";

export interface Described {
  name: string;
  /** The value in force, secrets masked; the documented default when unset. */
  value: string;
  source: "environment" | "flag" | "default";
}

/**
 * The configuration as an operator checks it (`stepwise config`): every variable,
 * its value in force and where that came from. Secrets show only their length;
 * a Redis URL shows its address without its password.
 */
export function describeConfig(
  env: Environment,
  flags: ReadonlyMap<string, { name: string; value: string }> = new Map(),
): Described[] {
  const byVariable = new Map([...flags.values()].map((f) => [f.name, f.value]));
  return VARIABLES.map((v) => {
    const fromFlag = byVariable.get(v.name);
    const raw = fromFlag ?? env[v.name];
    if (raw === undefined || raw === "") {
      return { name: v.name, value: plain(v.default), source: "default" };
    }
    return {
      name: v.name,
      value: v.secret ? mask(v.name, raw) : raw,
      source: fromFlag !== undefined ? "flag" : "environment",
    };
  });
}

function plain(markdown: string): string {
  return markdown.replace(/`/g, "");
}

function mask(name: string, raw: string): string {
  if (name === "REDIS_URL") {
    try {
      const url = new URL(raw);
      if (url.password) url.password = "***";
      return url.toString();
    } catch {
      return "***";
    }
  }
  if (name === "STEPWISE_API_KEYS") {
    // Names and scopes are not secret; an operator checks them here.
    return raw
      .split(",")
      .map((entry) => entry.trim().split(":").slice(0, 2).join(":") + ":***")
      .join(",");
  }
  return `*** (${raw.length} characters)`;
}
