import type { FastifyPluginAsync } from "fastify";
import { apiError } from "../errors.js";
import { errorResponses } from "../schemas.js";

/**
 * `/health`: readiness, meaning "this process can serve requests", which needs Redis.
 * The check is bounded by a timeout so a hung Redis connection turns the probe red
 * instead of hanging it (Docker's HEALTHCHECK and Kubernetes probes time out too).
 */
const CHECK_TIMEOUT_MS = 2000;

export interface HealthOptions {
  health: (() => Promise<void>) | undefined;
}

function withTimeout(check: () => Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([check(), timeout]).finally(() => clearTimeout(timer));
}

export const healthPlugin: FastifyPluginAsync<HealthOptions> = async (app, { health }) => {
  app.get(
    "/health",
    {
      config: { permission: "public" },
      schema: {
        summary: "Liveness and readiness (checks Redis)",
        tags: ["operations"],
        response: {
          200: {
            type: "object",
            required: ["status"],
            properties: {
              status: { type: "string", enum: ["ok"] },
              checks: { type: "object", additionalProperties: { type: "string" } },
            },
          },
          ...errorResponses,
        },
      },
    },
    async () => {
      if (!health) return { status: "ok", checks: {} };
      try {
        await withTimeout(health, CHECK_TIMEOUT_MS);
      } catch (err) {
        throw apiError("ServiceUnavailable", { reason: `redis: ${(err as Error).message}` }, [
          { check: "redis", message: (err as Error).message },
        ]);
      }
      return { status: "ok", checks: { redis: "ok" } };
    },
  );
};
