import type { FastifyPluginAsync } from "fastify";
import { EXECUTION_ID_PATTERN, errorResponses } from "../schemas.js";
import type { PluginOptions } from "../server.js";

/**
 * Provable audit (DESIGN.md, "History and audit"): an execution's history as
 * one signed JSONL document (runtime/audit/document.ts has the format), and the
 * public key that verifies it. `stepwise audit verify FILE` checks an export
 * offline.
 */
export const auditPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  app.get<{ Params: { executionId: string } }>(
    "/executions/:executionId/audit",
    {
      config: { permission: "executions:read" },
      schema: {
        summary: "The execution's signed audit export (JSONL)",
        description:
          "Line 1: a header with the execution record, the chain identity (execution ARN, " +
          "version, definition hash) and the definition. Then one line per history event, " +
          "ids 1..N, with its hash: SHA-256 of the previous hash and the event's RFC 8785 " +
          "JSON, the first chained on SHA-256 of the identity. Last: a trailer with the " +
          "genesis and head hashes, signed with Ed25519. Verify with `stepwise audit verify`.",
        tags: ["executions"],
        params: {
          type: "object",
          required: ["executionId"],
          properties: { executionId: { type: "string", pattern: EXECUTION_ID_PATTERN } },
        },
        response: {
          200: {
            description: "JSONL (application/x-ndjson)",
            content: { "application/x-ndjson": { schema: { type: "string" } } },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const lines = await runtime.exportAudit(request.params.executionId);
      return reply.type("application/x-ndjson").send(`${lines.join("\n")}\n`);
    },
  );

  app.get(
    "/audit/public-key",
    {
      config: { permission: "public" },
      schema: {
        summary: "The Ed25519 public key (PEM) that verifies audit exports",
        tags: ["executions"],
        response: {
          200: {
            description: "SPKI PEM",
            content: { "application/x-pem-file": { schema: { type: "string" } } },
          },
        },
      },
    },
    async (_request, reply) => {
      return reply.type("application/x-pem-file").send(await runtime.auditPublicKey());
    },
  );
};
