import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import type { Json } from "../../engine/core/json.js";
import {
  APPROVAL_STATUSES,
  DECISION_KINDS,
  GROUP_PATTERN,
  type ApprovalStatus,
  type DecisionKind,
} from "../../engine/states/approval.js";
import { deciders, mayDecide } from "../../runtime/approvals/approval-record.js";
import {
  DEFAULT_CLAIM_SECONDS,
  MAX_CLAIM_SECONDS,
  type AssignAction,
} from "../../runtime/approvals/approval-assign.js";
import { RuntimeError, type Approver } from "../../runtime/contract/index.js";
import { approvalRecord, errorResponses, nameSchema, page, pagingQuery } from "../schemas.js";
import type { PluginOptions } from "../server.js";
import type * as Shapes from "../shapes.js";

/**
 * The approval inbox (DESIGN.md "Human approval"): list and read approval records,
 * and decide one by echoing its envelope hash — the proof that the approver saw
 * what is approved. Keys of scope `approve` decide approvals whose `Approvers`
 * share one of their groups (or name none); `admin` keys decide anything.
 */

const APPROVAL_ID_PATTERN = "^ap_[0-9a-f]{24}$";

const approvalParams = {
  type: "object",
  required: ["approvalId"],
  properties: { approvalId: { type: "string", pattern: APPROVAL_ID_PATTERN } },
} as const;

/** Without API keys the service is loopback-only and whoever decides is `local`. */
export function approverOf(request: FastifyRequest): Approver {
  const caller = request.caller;
  if (!caller) return { name: "local", groups: "any" };
  return { name: caller.name, groups: caller.scope === "admin" ? "any" : caller.groups };
}

export const approvalsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  app.get<{
    Querystring: {
      status?: ApprovalStatus;
      approver?: string;
      stateMachine?: string;
      cursor?: string;
      limit?: number;
      assigned?: "me";
      claimed?: "me";
      dueBefore?: string;
      overdue?: boolean;
      sort?: "created" | "due";
    };
  }>(
    "/approvals",
    {
      config: { permission: "approvals:read" },
      schema: {
        summary: "The approval inbox, newest first",
        tags: ["approvals"],
        querystring: {
          type: "object",
          properties: {
            status: { type: "string", enum: APPROVAL_STATUSES },
            approver: {
              type: "string",
              pattern: GROUP_PATTERN,
              description: "Approvals whose Approvers name this group.",
            },
            stateMachine: nameSchema,
            assigned: {
              type: "string",
              enum: ["me"],
              description: "Approvals assigned (Assignees, or delegated) to the caller by name.",
            },
            claimed: {
              type: "string",
              enum: ["me"],
              description: "Approvals the caller holds a live claim on.",
            },
            dueBefore: {
              type: "string",
              format: "date-time",
              description: "Approvals due before this instant.",
            },
            overdue: { type: "boolean", description: "Pending approvals past their due date." },
            sort: {
              type: "string",
              enum: ["created", "due"],
              description:
                "`created` (default): newest first. `due`: the page's approvals by due date, soonest first, those without one last.",
            },
            ...pagingQuery,
          },
        },
        response: { 200: page(approvalRecord), ...errorResponses },
      },
    },
    async (request): Promise<Shapes.Page<Shapes.ApprovalRecord>> => {
      const { status, approver, stateMachine, cursor, limit } = request.query;
      // Assignment and due-date filters narrow each page, as the caller's groups do below.
      const page = await runtime.listApprovals({
        ...(status !== undefined ? { status } : {}),
        ...(approver !== undefined ? { approver } : {}),
        ...(stateMachine !== undefined ? { stateMachine } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
      // An approve key sees what it may decide, not every group's details (execution
      // data). A page may come out shorter than `limit`; its cursor still goes on.
      const who = approverOf(request);
      const now = Date.now();
      const q = request.query;
      const before = q.dueBefore !== undefined ? Date.parse(q.dueBefore) : undefined;
      const items = page.items.filter(
        (record) =>
          mayDecide(record, who) &&
          (q.assigned !== "me" || deciders(record).users.includes(who.name)) &&
          (q.claimed !== "me" ||
            (record.claim?.by === who.name && Date.parse(record.claim.until) > now)) &&
          (before === undefined ||
            (record.dueAt !== undefined && Date.parse(record.dueAt) < before)) &&
          (q.overdue === undefined ||
            q.overdue ===
              (record.status === "PENDING" &&
                record.dueAt !== undefined &&
                Date.parse(record.dueAt) <= now)),
      );
      if (q.sort === "due") {
        const due = (r: { dueAt?: string }) =>
          r.dueAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(r.dueAt);
        items.sort((a, b) => due(a) - due(b));
      }
      return { ...page, items };
    },
  );

  app.get<{ Params: { approvalId: string } }>(
    "/approvals/:approvalId",
    {
      config: { permission: "approvals:read" },
      schema: {
        summary: "One approval record",
        tags: ["approvals"],
        params: approvalParams,
        response: { 200: approvalRecord, ...errorResponses },
      },
    },
    async (request): Promise<Shapes.ApprovalRecord> => {
      const record = await runtime.getApproval(request.params.approvalId);
      // Another group's approval is answered as absent: its existence is not theirs either.
      if (!mayDecide(record, approverOf(request))) {
        throw new RuntimeError(
          "ApprovalDoesNotExist",
          `Approval '${request.params.approvalId}' does not exist`,
        );
      }
      return record;
    },
  );

  app.post<{
    Params: { approvalId: string };
    Body: {
      decision: DecisionKind;
      envelopeHash: string;
      comment?: string;
      response?: Json;
      patch?: Json[];
    };
  }>(
    "/approvals/:approvalId/decisions",
    {
      config: { permission: "approvals:decide" },
      schema: {
        summary:
          "Approve, reject, edit (approve with a JSON Patch of Editable fields) or respond (answer the ResponseSchema), echoing the envelope hash that was shown",
        tags: ["approvals"],
        params: approvalParams,
        body: {
          type: "object",
          required: ["decision", "envelopeHash"],
          additionalProperties: false,
          properties: {
            decision: { type: "string", enum: DECISION_KINDS },
            envelopeHash: { type: "string", pattern: "^[0-9a-f]{64}$" },
            comment: { type: "string", maxLength: 4096 },
            response: {
              description:
                "The answer to the approval's responseSchema (required with it, except for REJECT).",
            },
            patch: {
              type: "array",
              maxItems: 100,
              items: { type: "object", required: ["op", "path"] },
              description:
                "EDIT: an RFC 6902 JSON Patch (add, remove, replace, test) against the details shown, at Editable paths only.",
            },
          },
        },
        response: { 200: approvalRecord, ...errorResponses },
      },
    },
    async (request): Promise<Shapes.ApprovalRecord> => {
      const { decision, envelopeHash, comment, response, patch } = request.body;
      return runtime.decideApproval(request.params.approvalId, approverOf(request), {
        decision,
        envelopeHash,
        ...(comment !== undefined ? { comment } : {}),
        ...(response !== undefined ? { response } : {}),
        ...(patch !== undefined ? { patch } : {}),
      });
    },
  );

  // Human tasks: claim, release, delegate and comment. Each is an event in the
  // execution's history (ApprovalClaimed…, hash-chained) and a webhook event.
  const assignRoute = (
    suffix: string,
    summary: string,
    body: Record<string, unknown> | undefined,
    toAction: (body: any) => AssignAction,
  ) =>
    app.post<{ Params: { approvalId: string }; Body: any }>(
      `/approvals/:approvalId/${suffix}`,
      {
        config: { permission: "approvals:decide" },
        schema: {
          summary,
          tags: ["approvals"],
          params: approvalParams,
          ...(body ? { body } : {}),
          response: { 200: approvalRecord, ...errorResponses },
        },
      },
      async (request): Promise<Shapes.ApprovalRecord> =>
        runtime.assignApproval(
          request.params.approvalId,
          approverOf(request),
          toAction(request.body ?? {}),
        ) as Promise<Shapes.ApprovalRecord>,
    );

  assignRoute(
    "claim",
    "Claim an approval: others' decisions get 409 ApprovalClaimed until it is released, delegated or the claim lapses",
    {
      type: "object",
      additionalProperties: false,
      properties: {
        seconds: {
          type: "integer",
          minimum: 1,
          maximum: MAX_CLAIM_SECONDS,
          description: `How long the claim holds (default ${DEFAULT_CLAIM_SECONDS}).`,
        },
      },
    },
    (body: { seconds?: number }) => ({
      action: "claim",
      ...(body.seconds !== undefined ? { seconds: body.seconds } : {}),
    }),
  );
  assignRoute("release", "Release one's claim on an approval", undefined, () => ({
    action: "release",
  }));
  assignRoute(
    "delegate",
    "Hand an approval to another user or group (with a comment): only they decide it then",
    {
      type: "object",
      additionalProperties: false,
      properties: {
        toUser: { type: "string", pattern: GROUP_PATTERN },
        toGroup: { type: "string", pattern: GROUP_PATTERN },
        comment: { type: "string", maxLength: 4096 },
      },
    },
    (body: { toUser?: string; toGroup?: string; comment?: string }) => ({
      action: "delegate",
      ...(body.toUser !== undefined ? { toUser: body.toUser } : {}),
      ...(body.toGroup !== undefined ? { toGroup: body.toGroup } : {}),
      ...(body.comment !== undefined ? { comment: body.comment } : {}),
    }),
  );
  assignRoute(
    "comments",
    "Comment on an approval without deciding it",
    {
      type: "object",
      required: ["text"],
      additionalProperties: false,
      properties: { text: { type: "string", minLength: 1, maxLength: 4096 } },
    },
    (body: { text: string }) => ({ action: "comment", text: body.text }),
  );
};
