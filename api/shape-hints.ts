import { apiError, type ApiError } from "./errors.js";

/**
 * Requests that are nearly right get the right shape in the answer: a definition
 * sent bare where `{name, definition}` is expected, or an execution input sent
 * bare where `{input}` is expected. Checked before schema validation, whose
 * "'StartAt' is not a known field" would leave the caller guessing.
 */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? "";
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/** `wrapper` is the shape the route takes, e.g. `{"name": "<name>", "definition": …}`. */
export function bareDefinition(body: unknown, wrapper: string): ApiError | undefined {
  if (!isObject(body) || "definition" in body) return undefined;
  if (!("StartAt" in body) && !("States" in body)) return undefined;
  const reason = `the body is a bare definition; send it wrapped: ${wrapper}, or send the definition as the body with Content-Type: application/yaml`;
  return apiError("InvalidRequest", { location: "body", reason }, [
    { location: "body", path: "/definition", message: `'definition' is required: ${wrapper}` },
  ]);
}

/** A start body whose fields are neither `input` nor `name`: the input, sent bare. */
export function bareInput(body: unknown): ApiError | undefined {
  if (!isObject(body) || "input" in body) return undefined;
  const others = Object.keys(body).filter((key) => key !== "name");
  if (others.length === 0) return undefined;
  const { name: _, ...rest } = body;
  const reason = `'${others[0]}' is not a field of a start; the execution input goes in 'input' (any JSON value): {"input": ${preview(rest)}}`;
  return apiError(
    "InvalidRequest",
    { location: "body", reason },
    others.map((key) => ({
      location: "body",
      path: `/${key}`,
      message: `not a field of a start: send {"input": {...}, "name"?: "..."}`,
    })),
  );
}
