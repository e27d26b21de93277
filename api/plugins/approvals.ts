import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import {
  APPROVAL_STATUSES,
  GROUP_PATTERN,
  type ApprovalStatus,
} from "../../engine/states/approval.js";
import { mayDecide } from "../../runtime/approvals/approval-record.js";
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
            ...pagingQuery,
          },
        },
        response: { 200: page(approvalRecord), ...errorResponses },
      },
    },
    async (request): Promise<Shapes.Page<Shapes.ApprovalRecord>> => {
      const { status, approver, stateMachine, cursor, limit } = request.query;
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
      return { ...page, items: page.items.filter((record) => mayDecide(record, who)) };
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
    Body: { decision: "APPROVE" | "REJECT"; envelopeHash: string; comment?: string };
  }>(
    "/approvals/:approvalId/decisions",
    {
      config: { permission: "approvals:decide" },
      schema: {
        summary: "Approve or reject, echoing the envelope hash that was shown",
        tags: ["approvals"],
        params: approvalParams,
        body: {
          type: "object",
          required: ["decision", "envelopeHash"],
          additionalProperties: false,
          properties: {
            decision: { type: "string", enum: ["APPROVE", "REJECT"] },
            envelopeHash: { type: "string", pattern: "^[0-9a-f]{64}$" },
            comment: { type: "string", maxLength: 4096 },
          },
        },
        response: { 200: approvalRecord, ...errorResponses },
      },
    },
    async (request): Promise<Shapes.ApprovalRecord> => {
      const { decision, envelopeHash, comment } = request.body;
      return runtime.decideApproval(request.params.approvalId, approverOf(request), {
        decision,
        envelopeHash,
        ...(comment !== undefined ? { comment } : {}),
      });
    },
  );
};
