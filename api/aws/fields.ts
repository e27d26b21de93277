import type { Json } from "../../engine/core/json.js";
import { jsonProblem } from "../body.js";
import { awsError, invalidField, type AwsExceptionName } from "./errors.js";

/**
 * Reading the members of a request body as AWS's model types them. Each reader
 * names the member it refuses, so bad input answers a 400 saying which field.
 */
export type Body = Record<string, unknown>;

export function optionalString(
  body: Body,
  field: string,
  limits: { min?: number; max?: number } = {},
): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw invalidField(field, "Member must be a string");
  if (value.length < (limits.min ?? 0))
    throw invalidField(field, `Member must have length greater than or equal to ${limits.min}`);
  if (limits.max !== undefined && value.length > limits.max)
    throw invalidField(field, `Member must have length less than or equal to ${limits.max}`);
  return value;
}

export function requiredString(
  body: Body,
  field: string,
  limits: { min?: number; max?: number } = {},
): string {
  const value = optionalString(body, field, { min: 1, ...limits });
  if (value === undefined) throw invalidField(field, "Member must not be null");
  return value;
}

export function optionalBoolean(body: Body, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw invalidField(field, "Member must be a boolean");
  return value;
}

export function optionalInteger(
  body: Body,
  field: string,
  min: number,
  max: number,
): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value))
    throw invalidField(field, "Member must be an integer");
  if (value < min)
    throw invalidField(field, `Member must have value greater than or equal to ${min}`);
  if (value > max) throw invalidField(field, `Member must have value less than or equal to ${max}`);
  return value;
}

export function optionalEnum<T extends string>(
  body: Body,
  field: string,
  values: readonly T[],
): T | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !values.includes(value as T))
    throw invalidField(field, `Member must satisfy enum value set: [${values.join(", ")}]`);
  return value as T;
}

/** AWS's page size: 0 (or absent) means the default of 100; at most 1000. */
export function pageSize(body: Body): number | undefined {
  const n = optionalInteger(body, "maxResults", 0, 1000);
  return n === undefined || n === 0 ? undefined : n;
}

export function nextToken(body: Body): string | undefined {
  return optionalString(body, "nextToken", { min: 1, max: 3096 });
}

/**
 * A JSON document carried as a string (`input`, `output`): parsed, and checked as
 * the REST API checks bodies. Absent means `{}` where AWS defaults it so.
 */
export function jsonString(
  body: Body,
  field: string,
  exception: AwsExceptionName,
  fallback: Json | undefined,
): Json | undefined {
  const text = optionalString(body, field, { max: 256 * 1024 });
  if (text === undefined) return fallback;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw awsError(exception, `Invalid ${field}: ${(err as Error).message}`);
  }
  const problem = jsonProblem(value);
  if (problem) throw awsError(exception, `Invalid ${field}: ${problem.reason}`);
  return value as Json;
}

/** `[{key, value}]` → an object; keys 1–128, values 0–256 characters (AWS's Tag). */
export function tagList(body: Body, field = "tags"): Record<string, string> {
  const value = body[field];
  if (value === undefined || value === null) return {};
  if (!Array.isArray(value)) throw invalidField(field, "Member must be a list of {key, value}");
  const tags: Record<string, string> = {};
  value.forEach((tag: unknown, i) => {
    const t = tag as Body;
    if (typeof t !== "object" || t === null)
      throw invalidField(`${field}.${i + 1}`, "Member must be a Tag");
    const key = requiredString(t, "key", { max: 128 });
    const val = optionalString(t, "value", { max: 256 }) ?? "";
    tags[key] = val;
  });
  return tags;
}

export function tagObjects(tags: Record<string, string>): { key: string; value: string }[] {
  return Object.entries(tags)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, value }));
}

/** The JSON 1.0 protocol sends timestamps as epoch seconds (a number, fractions allowed). */
export function epochSeconds(iso: string): number {
  return Date.parse(iso) / 1000;
}
