import { canonicalJson } from "../core/canonical.js";
import { StatesError } from "../core/errors.js";
import type { Json } from "../core/json.js";
import { parseOffsetDateTime } from "../core/timestamp.js";
import { sha256Hex } from "../intrinsics/digest/sha256.js";
import type { Ajv2020, ValidateFunction } from "ajv/dist/2020.js";
import { load as loadAjv } from "../../schema/lazy/ajv.js";

/**
 * Human approval (DESIGN.md "Human approval"): a Task on
 * `arn:aws:states:::stepwise:approval` parks as an approval record bound to an
 * envelope — what was asked, of whom, under which policy, until when — whose
 * SHA-256 an approver must echo when deciding. This module is the pure part:
 * which resources are approvals, reading the Parameters, the envelope and its
 * hash. Storage and decisions live in runtime/approvals/approval-store.ts.
 */

const SUFFIX = /\.(waitForTaskToken|sync(:2)?)$/;
const APPROVAL = new Set(["stepwise:approval", "arn:aws:states:::stepwise:approval"]);
/** Parks on a token answered through /v1/task-tokens (no envelope): the plain callback. */
const TOKEN_PARK = new Set([
  "stepwise:waitForTaskToken",
  "arn:aws:states:::stepwise:waitForTaskToken",
]);

export function isApprovalResource(resource: string): boolean {
  return APPROVAL.has(resource.replace(SUFFIX, ""));
}

/** Resources nothing calls: the run waits on a token Stepwise mints itself, suffix or not. */
export function isParkResource(resource: string): boolean {
  const bare = resource.replace(SUFFIX, "");
  // `stepwise:waitForEvent` waits on its token too; its runner registers the token
  // with the event bus first (task-runners/resources.ts, runtime/triggers/events/event-waits.ts).
  return (
    APPROVAL.has(bare) ||
    TOKEN_PARK.has(bare) ||
    bare === "stepwise:waitForEvent" ||
    bare === "arn:aws:states:::stepwise:waitForEvent"
  );
}

export const APPROVAL_STATUSES = [
  "PENDING",
  "APPROVED",
  "REJECTED",
  "EXPIRED",
  "CANCELLED",
] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** Group names: what `STEPWISE_APPROVER_GROUPS` and index keys can carry. */
export const GROUP_PATTERN = "^[A-Za-z0-9_.-]{1,80}$";
const GROUP = new RegExp(GROUP_PATTERN);

/** What the approver's hash covers. Field set and names are a published contract (api/README.md). */
export interface ApprovalEnvelope {
  executionId: string;
  stateName: string;
  enteredEventId: number;
  subject: string;
  details: Json;
  approvers: string[];
  requiredApprovals: number;
  policy: string | null;
  expiresAt: string | null;
  /**
   * Human tasks (issue 40), present only when the approval has them, so the hash of
   * an approval without them is what it always was: the SHA-256 of the canonical
   * `ResponseSchema` (the form shown) and the `Editable` paths into `details`.
   */
  responseSchemaHash?: string;
  editable?: string[];
  /** `Assignees`: users (API key names) who may decide, beside the `approvers` groups. */
  assignees?: string[];
}

/** The envelope and what identifies it, as the step hands it to the driver. */
export interface ApprovalRequest extends ApprovalEnvelope {
  [key: string]: Json | undefined;
  approvalId: string;
  stateMachine: string;
  createdAt: string;
  envelopeHash: string;
  // With a form, also `responseSchema`: the `ResponseSchema` shown, whose hash is in the envelope.
  /**
   * Human tasks: when it is due (`DueInSeconds`, shown in the inbox), and the durable
   * timers of its reminders and escalation (seconds after creation). Not in the
   * envelope: they say when to nudge, not what is decided.
   */
  dueAt?: string;
  reminders?: number[];
  escalation?: { afterSeconds: number; to: string[] };
}

/** APPROVE / REJECT; EDIT approves with a JSON Patch of `Editable` fields; RESPOND answers the form. */
export const DECISION_KINDS = ["APPROVE", "REJECT", "EDIT", "RESPOND"] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

/**
 * One decision. Beside the fields below, `response` (the answer to `ResponseSchema`,
 * when one was sent) and `patch` (EDIT: the RFC 6902 patch against the details shown).
 */
export interface ApprovalDecision {
  [key: string]: Json;
  approver: string;
  decision: DecisionKind;
  comment: string | null;
  decidedAt: string;
}

/** Lowercase hex SHA-256 of the envelope's RFC 8785 canonical JSON. */
export function envelopeHash(envelope: ApprovalEnvelope): string {
  const { executionId, stateName, enteredEventId, subject, details } = envelope;
  const { approvers, requiredApprovals, policy, expiresAt } = envelope;
  const covered: { [key: string]: Json } = {
    executionId,
    stateName,
    enteredEventId,
    subject,
    details,
    approvers,
    requiredApprovals,
    policy,
    expiresAt,
  };
  if (envelope.responseSchemaHash !== undefined) {
    covered.responseSchemaHash = envelope.responseSchemaHash;
  }
  if (envelope.editable !== undefined) covered.editable = envelope.editable;
  if (envelope.assignees !== undefined) covered.assignees = envelope.assignees;
  const canonical = canonicalJson(covered);
  return sha256Hex(new TextEncoder().encode(canonical));
}

/**
 * The approval id is a one-way function of the task token: public (URLs, the
 * inbox) without giving the token away, and the same on replay because the token
 * comes from the event's recorded nonce.
 */
export function approvalIdOf(token: string): string {
  return `ap_${sha256Hex(new TextEncoder().encode(`approval:${token}`)).slice(0, 24)}`;
}

function fieldError(stateName: string, message: string): StatesError {
  return new StatesError(
    "States.Runtime",
    `The approval of state '${stateName}' cannot be created: ${message}`,
  );
}

/**
 * Reads the effective Parameters (JSONPath) or Arguments (JSONata) of an approval
 * task. A missing or malformed field fails the state with States.Runtime naming
 * the field, as AWS fails a service integration given malformed parameters.
 */
export function approvalRequest(
  input: Json,
  at: {
    executionId: string;
    stateMachine: string;
    stateName: string;
    enteredEventId: number;
    now: number;
    token: string;
    timeoutSeconds: number | undefined;
  },
): ApprovalRequest & { explicitExpiry: boolean } {
  const fail = (message: string) => fieldError(at.stateName, message);
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throw fail("its Parameters must be an object with at least 'Subject'");
  }
  const known = new Set([
    "Subject",
    "Details",
    "Approvers",
    "RequiredApprovals",
    "Policy",
    "ExpiresInSeconds",
    "ExpiresAt",
    "ResponseSchema",
    "Editable",
    "Assignees",
    "DueInSeconds",
    "Reminders",
    "Escalation",
  ]);
  for (const key of Object.keys(input)) {
    if (!known.has(key)) {
      throw fail(`'${key}' is not an approval field (${[...known].join(", ")})`);
    }
  }
  const subject = input.Subject;
  if (typeof subject !== "string" || subject.trim() === "") {
    throw fail("'Subject' is required: a non-empty string saying what is asked");
  }
  const approvers = input.Approvers ?? [];
  if (
    !Array.isArray(approvers) ||
    !approvers.every((g): g is string => typeof g === "string" && GROUP.test(g))
  ) {
    throw fail(`'Approvers' must be an array of group names matching ${GROUP_PATTERN}`);
  }
  const required = input.RequiredApprovals ?? 1;
  if (typeof required !== "number" || !Number.isInteger(required) || required < 1) {
    throw fail("'RequiredApprovals' must be an integer of at least 1");
  }
  const policy = input.Policy ?? null;
  if (policy !== null && typeof policy !== "string") throw fail("'Policy' must be a string");
  if (input.ExpiresInSeconds !== undefined && input.ExpiresAt !== undefined) {
    throw fail("give 'ExpiresInSeconds' or 'ExpiresAt', not both");
  }
  const assignees = input.Assignees;
  if (assignees !== undefined) {
    const why = assigneesProblem(assignees);
    if (why) throw fail(`'Assignees' ${why}`);
  }
  for (const field of ["DueInSeconds", "Reminders", "Escalation"] as const) {
    const why = input[field] === undefined ? undefined : timingProblem(field, input[field]!);
    if (why) throw fail(`'${field}' ${why}`);
  }
  const schema = input.ResponseSchema;
  if (schema !== undefined) {
    const why = responseSchemaProblem(schema);
    if (why) throw fail(`'ResponseSchema' ${why}`);
  }
  const editable = input.Editable;
  if (editable !== undefined) {
    const why = editableProblem(editable);
    if (why) throw fail(`'Editable' ${why}`);
  }
  let expires: number | undefined;
  if (input.ExpiresInSeconds !== undefined) {
    const seconds = input.ExpiresInSeconds;
    if (typeof seconds !== "number" || !(seconds > 0) || !Number.isFinite(seconds)) {
      throw fail("'ExpiresInSeconds' must be a positive number");
    }
    expires = at.now + Math.round(seconds * 1000);
  } else if (input.ExpiresAt !== undefined) {
    const when =
      typeof input.ExpiresAt === "string" ? parseOffsetDateTime(input.ExpiresAt) : undefined;
    if (when === undefined) throw fail("'ExpiresAt' must be an RFC 3339 timestamp");
    expires = when;
  } else if (at.timeoutSeconds !== undefined) {
    expires = at.now + at.timeoutSeconds * 1000;
  }
  const envelope: ApprovalEnvelope = {
    executionId: at.executionId,
    stateName: at.stateName,
    enteredEventId: at.enteredEventId,
    subject,
    details: input.Details ?? null,
    approvers: [...new Set(approvers)],
    requiredApprovals: required,
    policy,
    expiresAt: expires === undefined ? null : new Date(expires).toISOString(),
  };
  if (schema !== undefined) envelope.responseSchemaHash = schemaHash(schema);
  if (editable !== undefined) envelope.editable = [...new Set(editable as string[])];
  if (assignees !== undefined) envelope.assignees = [...new Set(assignees as string[])];
  const request: ApprovalRequest & { explicitExpiry: boolean } = {
    approvalId: approvalIdOf(at.token),
    stateMachine: at.stateMachine,
    createdAt: new Date(at.now).toISOString(),
    ...envelope,
    envelopeHash: envelopeHash(envelope),
    explicitExpiry: input.ExpiresInSeconds !== undefined || input.ExpiresAt !== undefined,
  };
  if (schema !== undefined) request.responseSchema = schema;
  if (typeof input.DueInSeconds === "number") {
    request.dueAt = new Date(at.now + Math.round(input.DueInSeconds * 1000)).toISOString();
  }
  if (Array.isArray(input.Reminders)) {
    request.reminders = input.Reminders.map((r) => (r as { AfterSeconds: number }).AfterSeconds);
  }
  const escalation = input.Escalation as { AfterSeconds: number; To: string[] } | undefined;
  if (escalation !== undefined) {
    request.escalation = { afterSeconds: escalation.AfterSeconds, to: [...new Set(escalation.To)] };
  }
  return request;
}

// --- Human tasks: forms (ResponseSchema) and edits (Editable) ------------------------

/**
 * Built on first use: building it (and its formats) cost every process that loads
 * the engine ~45 ms of CPU at start-up, `stepwise test` and `validate` included,
 * though few machines have forms. The built CLI loads ajv itself then too
 * (schema/lazy/ajv.ts).
 */
let ajv: Ajv2020 | undefined;
function formAjv(): Ajv2020 {
  if (!ajv) {
    const { Ajv2020, addFormats } = loadAjv();
    ajv = new Ajv2020({ strict: true, allErrors: false, validateFormats: true });
    addFormats(ajv);
  }
  return ajv;
}
const compiled = new Map<string, ValidateFunction>();

/** The SHA-256 of a schema's canonical JSON: what the envelope binds the form by. */
export function schemaHash(schema: Json): string {
  return sha256Hex(new TextEncoder().encode(canonicalJson(schema)));
}

function validatorOf(schema: Json): ValidateFunction {
  const hash = schemaHash(schema);
  let validate = compiled.get(hash);
  if (!validate) {
    validate = formAjv().compile(schema as object);
    if (compiled.size > 500) compiled.clear();
    compiled.set(hash, validate);
  }
  return validate;
}

/**
 * Why a `ResponseSchema` is not a usable JSON Schema (draft 2020-12, ajv strict:
 * unknown keywords and formats are errors), or undefined when it is one.
 */
export function responseSchemaProblem(schema: Json): string | undefined {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    return "must be a JSON Schema object (draft 2020-12)";
  }
  try {
    if (!formAjv().validateSchema(schema)) {
      const first = formAjv().errors?.[0];
      return `is not a valid JSON Schema: ${first ? `${first.instancePath || "/"} ${first.message ?? ""}`.trim() : "invalid"}`;
    }
    validatorOf(schema);
    return undefined;
  } catch (err) {
    return `is not a valid JSON Schema: ${(err as Error).message}`;
  }
}

/** A response that fails its form: the field (ajv's instancePath, a JSON pointer) and why. */
export interface ResponseProblem {
  field: string;
  message: string;
}

export function responseProblem(schema: Json, response: Json): ResponseProblem | undefined {
  const validate = validatorOf(schema);
  if (validate(response)) return undefined;
  const error = validate.errors?.[0];
  if (!error) return { field: "", message: "does not match the form" };
  // A missing property is named by its own path, not its parent's.
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  const field =
    missing !== undefined ? `${error.instancePath}/${escapePointer(missing)}` : error.instancePath;
  return { field, message: error.message ?? "is invalid" };
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * An `Editable` entry as a JSON pointer into `Details`: a JSONPath of names and
 * indexes only (`$.amount`, `$.payee.iban`, `$.lines[0].qty`, `$['odd key']`);
 * undefined for anything else (wildcards, filters, slices).
 */
export function editablePointer(path: string): string | undefined {
  if (!path.startsWith("$")) return undefined;
  let rest = path.slice(1);
  const out: string[] = [];
  while (rest.length > 0) {
    let m = /^\.([A-Za-z_$][A-Za-z0-9_$-]*)/.exec(rest);
    if (m) {
      out.push(escapePointer(m[1]!));
      rest = rest.slice(m[0].length);
      continue;
    }
    m = /^\[(\d+)\]/.exec(rest);
    if (m) {
      out.push(m[1]!);
      rest = rest.slice(m[0].length);
      continue;
    }
    m = /^\['((?:[^'\\]|\\.)*)'\]/.exec(rest);
    if (m) {
      out.push(escapePointer(m[1]!.replace(/\\(.)/g, "$1")));
      rest = rest.slice(m[0].length);
      continue;
    }
    return undefined;
  }
  return out.length === 0 ? undefined : `/${out.join("/")}`;
}

export function editableProblem(value: Json): string | undefined {
  if (!Array.isArray(value) || value.length === 0) {
    return "must be a non-empty array of JSONPaths into 'Details' ($.amount, $.payee.iban)";
  }
  for (const path of value) {
    if (typeof path !== "string" || editablePointer(path) === undefined) {
      return `'${String(path)}' is not a JSONPath of names and indexes into 'Details' (like $.amount or $.lines[0].qty)`;
    }
  }
  return undefined;
}

/** The operations an EDIT may carry (RFC 6902 minus move/copy, which reach outside a path). */
const PATCH_OPS = new Set(["add", "remove", "replace", "test"]);

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

function clone(value: Json): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

/**
 * Applies an EDIT's RFC 6902 patch to the details that were shown, refusing any
 * operation outside the `Editable` paths (a path equal to one or below it).
 */
export function applyEdit(
  details: Json,
  patch: Json,
  editable: readonly string[],
): { ok: true; details: Json } | { ok: false; message: string } {
  const allowed = editable.map((p) => editablePointer(p)).filter((p): p is string => !!p);
  if (!Array.isArray(patch) || patch.length === 0) {
    return { ok: false, message: "'patch' must be a non-empty RFC 6902 JSON Patch array" };
  }
  const doc = clone(details);
  for (const [i, raw] of patch.entries()) {
    const at = `patch[${i}]`;
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      return { ok: false, message: `${at} must be an operation object` };
    }
    const { op, path } = raw;
    if (typeof op !== "string" || !PATCH_OPS.has(op)) {
      return { ok: false, message: `${at}: op must be one of ${[...PATCH_OPS].join(", ")}` };
    }
    if (typeof path !== "string" || (path !== "" && !path.startsWith("/"))) {
      return { ok: false, message: `${at}: path must be a JSON pointer` };
    }
    if (!allowed.some((p) => path === p || path.startsWith(`${p}/`))) {
      return {
        ok: false,
        message: `${at}: '${path}' is not editable (Editable: ${editable.join(", ") || "none"})`,
      };
    }
    if (op !== "remove" && !("value" in raw)) {
      return { ok: false, message: `${at}: '${op}' needs a value` };
    }
    const segments = path.split("/").slice(1).map(unescapePointer);
    const last = segments.pop()!;
    let parent: Json = doc;
    for (const segment of segments) {
      const next: Json | undefined = Array.isArray(parent)
        ? /^\d+$/.test(segment)
          ? parent[Number(segment)]
          : undefined
        : parent !== null && typeof parent === "object"
          ? Object.prototype.hasOwnProperty.call(parent, segment)
            ? parent[segment]
            : undefined
          : undefined;
      if (next === undefined) return { ok: false, message: `${at}: '${path}' does not exist` };
      parent = next;
    }
    const value = raw.value as Json;
    if (Array.isArray(parent)) {
      const index = last === "-" ? parent.length : /^\d+$/.test(last) ? Number(last) : NaN;
      const exists = index < parent.length;
      if (Number.isNaN(index) || index > parent.length || (op !== "add" && !exists)) {
        return { ok: false, message: `${at}: '${path}' does not exist` };
      }
      if (op === "add") parent.splice(index, 0, clone(value));
      else if (op === "remove") parent.splice(index, 1);
      else if (op === "replace") parent[index] = clone(value);
      else if (canonicalJson(parent[index]!) !== canonicalJson(value)) {
        return { ok: false, message: `${at}: test failed at '${path}'` };
      }
    } else if (parent !== null && typeof parent === "object") {
      const exists = Object.prototype.hasOwnProperty.call(parent, last);
      if (op !== "add" && !exists) return { ok: false, message: `${at}: '${path}' does not exist` };
      if (op === "add" || op === "replace") parent[last] = clone(value);
      else if (op === "remove") delete parent[last];
      else if (canonicalJson(parent[last]!) !== canonicalJson(value)) {
        return { ok: false, message: `${at}: test failed at '${path}'` };
      }
    } else {
      return { ok: false, message: `${at}: '${path}' does not exist` };
    }
  }
  return { ok: true, details: doc };
}

/** Why `Assignees` is not a list of user (API key) names, or undefined. */
export function assigneesProblem(value: Json): string | undefined {
  return Array.isArray(value) &&
    value.every((u): u is string => typeof u === "string" && GROUP.test(u))
    ? undefined
    : `must be an array of user names matching ${GROUP_PATTERN}`;
}

const positive = (v: Json | undefined): boolean =>
  typeof v === "number" && Number.isFinite(v) && v > 0;

/** Why `DueInSeconds`, `Reminders` or `Escalation` is malformed, or undefined. */
export function timingProblem(
  field: "DueInSeconds" | "Reminders" | "Escalation",
  value: Json,
): string | undefined {
  switch (field) {
    case "DueInSeconds":
      return positive(value) ? undefined : "must be a positive number";
    case "Reminders":
      return Array.isArray(value) &&
        value.length > 0 &&
        value.length <= 20 &&
        value.every(
          (r) =>
            r !== null &&
            typeof r === "object" &&
            !Array.isArray(r) &&
            Object.keys(r).every((k) => k === "AfterSeconds") &&
            positive(r.AfterSeconds),
        )
        ? undefined
        : 'must be an array of 1 to 20 objects {"AfterSeconds": <positive number>}';
    case "Escalation": {
      const ok =
        value !== null &&
        typeof value === "object" &&
        !Array.isArray(value) &&
        Object.keys(value).every((k) => k === "AfterSeconds" || k === "To") &&
        positive(value.AfterSeconds) &&
        Array.isArray(value.To) &&
        value.To.length > 0 &&
        value.To.every((g) => typeof g === "string" && GROUP.test(g));
      return ok
        ? undefined
        : `must be {"AfterSeconds": <positive number>, "To": [group names matching ${GROUP_PATTERN}]}`;
    }
  }
}
