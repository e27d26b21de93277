import type { FastifyPluginAsync } from "fastify";
import type { Registry } from "prom-client";

/**
 * `/metrics` in the Prometheus text format. Public, like most scrape endpoints: it
 * exposes counts, never names, inputs or outputs. What it holds is decided where the
 * registry is filled (api/metrics.ts, runtime/worker/worker-metrics.ts).
 */
export interface MetricsOptions {
  registry: Registry;
}

export const metricsPlugin: FastifyPluginAsync<MetricsOptions> = async (app, { registry }) => {
  app.get(
    "/metrics",
    {
      config: { permission: "public" },
      schema: {
        summary: "Prometheus metrics",
        description:
          "The process's default series, HTTP requests, the runtime's executions by status, " +
          "queue depth, pending timers and task tokens, and (with a worker in the same " +
          "process) transitions and their latency.",
        tags: ["operations"],
        response: {
          200: {
            description: "Prometheus text exposition format 0.0.4",
            content: { "text/plain": { schema: { type: "string" } } },
          },
        },
      },
    },
    async (_request, reply) => {
      const text = await registry.metrics();
      return reply.type(registry.contentType).send(text);
    },
  );
};
