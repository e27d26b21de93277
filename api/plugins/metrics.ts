import type { FastifyPluginAsync } from "fastify";
import {
  Exposition,
  writeRuntimeMetrics,
  type HttpMetrics,
  type MetricsSource,
} from "../metrics.js";

/**
 * `/metrics` in the Prometheus text format. Public, like most scrape endpoints: it
 * exposes counts, never names, inputs or outputs. A runtime that fails to report
 * must not make the scrape fail — the HTTP series and `stepwise_up` still answer.
 */
export interface MetricsOptions {
  http: HttpMetrics;
  source: MetricsSource | undefined;
}

export const metricsPlugin: FastifyPluginAsync<MetricsOptions> = async (app, { http, source }) => {
  app.get(
    "/metrics",
    {
      config: { permission: "public" },
      schema: {
        summary: "Prometheus metrics",
        tags: ["operations"],
      },
    },
    async (request, reply) => {
      const out = new Exposition();
      let runtimeUp = 0;
      if (source) {
        try {
          writeRuntimeMetrics(out, await source.metrics());
          runtimeUp = 1;
        } catch (err) {
          request.log.warn({ err }, "runtime metrics unavailable");
        }
      }
      out.metric(
        "stepwise_runtime_metrics_up",
        "gauge",
        "1 when the runtime reported its metrics.",
        [{ value: runtimeUp }],
      );
      http.write(out);
      return reply.type("text/plain; version=0.0.4; charset=utf-8").send(out.toString());
    },
  );
};
