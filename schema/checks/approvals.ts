import { isJsonObject, type Json } from "../../engine/core/json.js";
import {
  assigneesProblem,
  editableProblem,
  GROUP_PATTERN,
  isApprovalResource,
  responseSchemaProblem,
  timingProblem,
} from "../../engine/states/approval.js";
import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { child } from "../pointer.js";
import { parseOffsetDateTime } from "../../engine/core/timestamp.js";
import type { Model } from "./model.js";

/**
 * The fields of an approval task (`stepwise:approval`) that can be checked before
 * it runs: what the step would fail with States.Runtime at run time
 * (engine/states/approval.ts), reported here when the value is static — a JSONPath
 * `Parameters` field without `.$`, a JSONata `Arguments` value that is not a
 * `{% … %}` expression.
 */
const FIELDS = [
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
];
const GROUP = new RegExp(GROUP_PATTERN);

function isExpression(value: Json | undefined): boolean {
  return typeof value === "string" && /^\{%[\s\S]*%\}$/.test(value.trim());
}

/** Why a static value is wrong for `field`, or undefined when it is fine. */
function problem(field: string, value: Json): string | undefined {
  switch (field) {
    case "Subject":
      return typeof value === "string" && value.trim() !== ""
        ? undefined
        : "must be a non-empty string";
    case "Approvers":
      return Array.isArray(value) && value.every((g) => typeof g === "string" && GROUP.test(g))
        ? undefined
        : `must be an array of group names matching ${GROUP_PATTERN}`;
    case "RequiredApprovals":
      return typeof value === "number" && Number.isInteger(value) && value >= 1
        ? undefined
        : "must be an integer of at least 1";
    case "Policy":
      return typeof value === "string" ? undefined : "must be a string";
    case "ExpiresInSeconds":
      return typeof value === "number" && value > 0 ? undefined : "must be a positive number";
    case "ExpiresAt":
      return typeof value === "string" && parseOffsetDateTime(value) !== undefined
        ? undefined
        : "must be an RFC 3339 timestamp";
    case "ResponseSchema":
      return responseSchemaProblem(value);
    case "Editable":
      return editableProblem(value);
    case "Assignees":
      return assigneesProblem(value);
    case "DueInSeconds":
    case "Reminders":
    case "Escalation":
      return timingProblem(field, value);
    default:
      return undefined;
  }
}

export function checkApprovals(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const state of model.states) {
    const { node, pointer } = state;
    if (state.type !== "Task" || typeof node.Resource !== "string") continue;
    if (!isApprovalResource(node.Resource)) continue;
    const key = state.language === "JSONata" ? "Arguments" : "Parameters";
    const args = node[key];
    if (args === undefined) {
      out.push(
        diagnostic(
          "INVALID_APPROVAL_FIELD",
          `An approval needs ${key} with at least 'Subject' (what is asked)`,
          child(pointer, "Resource"),
        ),
      );
      continue;
    }
    if (!isJsonObject(args)) continue; // a JSONata expression: known only at run time
    const at = child(pointer, key);
    const given = new Map<string, { value: Json; dynamic: boolean; key: string }>();
    for (const [raw, value] of Object.entries(args)) {
      const dynamic = raw.endsWith(".$") || isExpression(value);
      const field = raw.endsWith(".$") ? raw.slice(0, -2) : raw;
      if (!FIELDS.includes(field)) {
        out.push(
          diagnostic(
            "INVALID_APPROVAL_FIELD",
            `'${field}' is not an approval field (${FIELDS.join(", ")})`,
            child(at, raw),
          ),
        );
        continue;
      }
      given.set(field, { value, dynamic, key: raw });
    }
    if (!given.has("Subject")) {
      out.push(
        diagnostic(
          "INVALID_APPROVAL_FIELD",
          "'Subject' is required: a non-empty string saying what is asked",
          at,
        ),
      );
    }
    if (given.has("ExpiresInSeconds") && given.has("ExpiresAt")) {
      out.push(
        diagnostic(
          "INVALID_APPROVAL_FIELD",
          "Give 'ExpiresInSeconds' or 'ExpiresAt', not both",
          at,
        ),
      );
    }
    for (const [field, { value, dynamic, key: raw }] of given) {
      if (dynamic) continue;
      const why = problem(field, value);
      if (why) {
        out.push(diagnostic("INVALID_APPROVAL_FIELD", `'${field}' ${why}`, child(at, raw)));
      }
    }
  }
  return out;
}
