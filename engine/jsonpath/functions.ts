import type { Json } from "../core/json.js";
import { isJsonObject } from "../core/json.js";

/**
 * Jayway's path functions (`$.items.length()`), applied to the path's result.
 * undefined when the function does not apply (Jayway raises an error; for us the
 * path then selects nothing).
 */
type PathFunction = (value: Json) => Json | undefined;

function numbers(value: Json): number[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out = value.filter((v): v is number => typeof v === "number");
  return out.length === 0 ? undefined : out;
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

const PATH_FUNCTIONS: Readonly<Record<string, PathFunction>> = {
  length(value) {
    if (Array.isArray(value) || typeof value === "string") return value.length;
    if (isJsonObject(value)) return Object.keys(value).length;
    return undefined;
  },
  size: (value) => PATH_FUNCTIONS.length!(value),
  min: (value) => {
    const xs = numbers(value);
    return xs && Math.min(...xs);
  },
  max: (value) => {
    const xs = numbers(value);
    return xs && Math.max(...xs);
  },
  sum: (value) => {
    const xs = numbers(value);
    return xs && sum(xs);
  },
  avg: (value) => {
    const xs = numbers(value);
    return xs && sum(xs) / xs.length;
  },
  stddev: (value) => {
    const xs = numbers(value);
    if (xs === undefined) return undefined;
    const mean = sum(xs) / xs.length;
    return Math.sqrt(sum(xs.map((x) => x * x)) / xs.length - mean * mean);
  },
  keys: (value) => (isJsonObject(value) ? Object.keys(value) : undefined),
  first: (value) => (Array.isArray(value) && value.length > 0 ? value[0] : undefined),
  last: (value) => (Array.isArray(value) && value.length > 0 ? value[value.length - 1] : undefined),
};

export function applyPathFunction(name: string, value: Json): Json | undefined {
  const fn = Object.prototype.hasOwnProperty.call(PATH_FUNCTIONS, name)
    ? PATH_FUNCTIONS[name]
    : undefined;
  return fn === undefined ? undefined : fn(value);
}
