import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { apiError } from "../api/errors.js";

/**
 * `GET /metrics` of a process that serves no API (`stepwise worker --metrics-port`):
 * a bare node:http server, since fastify's routing, validation and docs would all
 * be for one route. Other paths answer 404 from the error registry like the API.
 * It has no authentication, so it binds to loopback unless told otherwise
 * (`--metrics-host`): a scraper elsewhere is a deliberate choice.
 */
export interface MetricsServer {
  port: number;
  host: string;
  close(): Promise<void>;
}

export async function serveMetrics(
  registry: Registry,
  port: number,
  host = "127.0.0.1",
): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0]!;
    if (request.method !== "GET" || path !== "/metrics") {
      const error = apiError("RouteNotFound", { method: request.method ?? "?", url: path });
      response.writeHead(error.status, { "content-type": "application/json" });
      response.end(JSON.stringify(error.toBody()));
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { "content-type": registry.contentType });
        response.end(text);
      },
      () => {
        const error = apiError("InternalError", { requestId: "metrics" });
        response.writeHead(error.status, { "content-type": "application/json" });
        response.end(JSON.stringify(error.toBody()));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    host,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Scrapers keep connections alive; they must not hold the process open.
        server.closeAllConnections();
      }),
  };
}
