import type { FastifyInstance } from "fastify";
import type { Json } from "../engine/core/json.js";
import { parseJsonText } from "../schema/source/json-text.js";
import { apiError } from "./errors.js";

/**
 * Reading request bodies so that nothing a client sends can crash the service:
 * JSON.parse is iterative in V8 (a million-deep array parses fine), but later
 * recursive walks — ajv, JSON.stringify, the engine — are not, so every parsed body is
 * checked by an iterative walk before anything else sees it.
 */

/** The AWS request size quota. Bodies over it are refused with 413 before parsing. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** The AWS payload quota for execution input and task output (256 KiB). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
/** Far deeper than any real payload, far below what a recursive walk overflows on. */
export const MAX_JSON_DEPTH = 256;

/** Media types read as text: a definition in JSON or YAML, read by the validator. */
export const TEXT_TYPES = [
  "application/yaml",
  "application/x-yaml",
  "text/yaml",
  "text/x-yaml",
  "text/plain",
] as const;

/**
 * Checks a parsed JSON value iteratively: depth, numbers JSON cannot represent
 * (`1e400` parses to Infinity and would be stored as null), and `__proto__` keys
 * (harmless as data, but a prototype setter for any later Object.assign).
 * Returns the reason and JSON pointer of the first problem.
 */
export function jsonProblem(root: unknown): { reason: string; pointer: string } | undefined {
  const stack: { value: unknown; pointer: string; depth: number }[] = [
    { value: root, pointer: "", depth: 0 },
  ];
  while (stack.length > 0) {
    const { value, pointer, depth } = stack.pop()!;
    if (typeof value === "number") {
      if (!Number.isFinite(value)) {
        return { reason: `the number at '${pointer}' is out of range`, pointer };
      }
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (depth >= MAX_JSON_DEPTH) {
      // The pointer of a hostile document is as long as its nesting: keep the start.
      const shown = pointer.length > 120 ? `${pointer.slice(0, 120)}…` : pointer;
      return {
        reason: `objects and arrays nest deeper than ${MAX_JSON_DEPTH} levels`,
        pointer: shown,
      };
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        stack.push({ value: value[i], pointer: `${pointer}/${i}`, depth: depth + 1 });
      }
      continue;
    }
    for (const key of Object.keys(value)) {
      const child = `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
      if (key === "__proto__")
        return { reason: `the key '__proto__' is not allowed`, pointer: child };
      stack.push({
        value: (value as Record<string, unknown>)[key],
        pointer: child,
        depth: depth + 1,
      });
    }
  }
  return undefined;
}

/** Size of a JSON value as stored (UTF-8 of its JSON text). Call only on checked values. */
export function jsonSize(value: Json): number {
  return Buffer.byteLength(JSON.stringify(value), "utf8");
}

/** Refuses payloads over the 256 KiB quota with States.DataLimitExceeded (413). */
export function checkPayloadSize(value: Json, what: string, pointer: string): void {
  const size = jsonSize(value);
  if (size > MAX_PAYLOAD_BYTES) {
    // `what` names the payload ("the task output"): the template is shared by all of them.
    throw apiError(
      "States.DataLimitExceeded",
      { what: what.replace(/^the /, ""), size, limit: MAX_PAYLOAD_BYTES },
      [{ location: "body", path: pointer, message: `${what} is ${size} bytes` }],
    );
  }
}

export function parseJsonBody(text: string): unknown {
  // An empty body with a JSON content type means "no body" (curl -X POST -H ... sends it).
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    // JSON.parse and the CLI's parser accept the same (strict RFC 8259) JSON; the
    // fast one reads, and the CLI's, which knows lines and columns, explains.
    value = JSON.parse(text);
  } catch (err) {
    throw syntaxError(text, err);
  }
  const problem = jsonProblem(value);
  if (problem) {
    throw apiError("InvalidJson", { reason: problem.reason }, [
      { location: "body", path: problem.pointer, message: problem.reason },
    ]);
  }
  return value;
}

/** Where and why JSON text does not parse, in the words `stepwise validate` uses. */
function syntaxError(text: string, err: unknown) {
  const problem = parseJsonText(text, false).diagnostics[0];
  if (problem === undefined) return apiError("InvalidJson", { reason: (err as Error).message });
  const where =
    problem.line !== undefined ? ` at line ${problem.line}, column ${problem.column ?? 1}` : "";
  return apiError("InvalidJson", { reason: `${problem.message}${where}` }, [
    {
      location: "body",
      path: problem.path,
      message: problem.message,
      ...(problem.line !== undefined ? { line: problem.line, column: problem.column ?? 1 } : {}),
    },
  ]);
}

/**
 * Registers the body parsers on the root instance (content-type parsers are
 * encapsulated, so every resource plugin inherits these). Anything else is refused
 * by fastify with FST_ERR_CTP_INVALID_MEDIA_TYPE, which the error handler turns into
 * UnsupportedMediaType (415).
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const json = (
    _request: unknown,
    body: string | Buffer,
    done: (err: Error | null, value?: unknown) => void,
  ) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  };
  const asString = { parseAs: "string", bodyLimit: MAX_BODY_BYTES } as const;
  app.addContentTypeParser("application/json", asString, json);
  // Vendor JSON types (application/merge-patch+json, application/vnd.x+json) are JSON too.
  app.addContentTypeParser(/^application\/[\w.+-]+\+json$/, asString, json);
  app.addContentTypeParser([...TEXT_TYPES], asString, (_request, body, done) => done(null, body));
}

/** True when the request's body arrived as text (YAML or plain text), not JSON. */
export function isTextBody(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const essence = contentType.split(";")[0]!.trim().toLowerCase();
  return (TEXT_TYPES as readonly string[]).includes(essence);
}
