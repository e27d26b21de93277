import { canonicalJson } from "../core/canonical.js";
import { StatesError } from "../core/errors.js";
import type { Json } from "../core/json.js";
import { parseOffsetDateTime } from "../core/timestamp.js";
import { sha256Hex } from "../intrinsics/digest/sha256.js";

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
  return APPROVAL.has(bare) || TOKEN_PARK.has(bare);
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
}

/** The envelope and what identifies it, as the step hands it to the driver. */
export interface ApprovalRequest extends ApprovalEnvelope {
  [key: string]: Json;
  approvalId: string;
  stateMachine: string;
  createdAt: string;
  envelopeHash: string;
}

export interface ApprovalDecision {
  [key: string]: Json;
  approver: string;
  decision: "APPROVE" | "REJECT";
  comment: string | null;
  decidedAt: string;
}

/** Lowercase hex SHA-256 of the envelope's RFC 8785 canonical JSON. */
export function envelopeHash(envelope: ApprovalEnvelope): string {
  const { executionId, stateName, enteredEventId, subject, details } = envelope;
  const { approvers, requiredApprovals, policy, expiresAt } = envelope;
  const canonical = canonicalJson({
    executionId,
    stateName,
    enteredEventId,
    subject,
    details,
    approvers,
    requiredApprovals,
    policy,
    expiresAt,
  });
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
  return {
    approvalId: approvalIdOf(at.token),
    stateMachine: at.stateMachine,
    createdAt: new Date(at.now).toISOString(),
    ...envelope,
    envelopeHash: envelopeHash(envelope),
    explicitExpiry: input.ExpiresInSeconds !== undefined || input.ExpiresAt !== undefined,
  };
}
