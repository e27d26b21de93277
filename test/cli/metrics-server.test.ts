import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { serveMetrics } from "../../cli/metrics-server.js";

/** `stepwise worker --metrics-port` has no authentication: loopback unless asked. */
describe("worker metrics server", () => {
  it("binds to 127.0.0.1 by default and answers there", async () => {
    const server = await serveMetrics(new Registry(), 0);
    try {
      expect(server.host).toBe("127.0.0.1");
      const reply = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(reply.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("binds to the host it is given", async () => {
    const server = await serveMetrics(new Registry(), 0, "127.0.0.2");
    try {
      expect((await fetch(`http://127.0.0.2:${server.port}/metrics`)).status).toBe(200);
      const elsewhere = await fetch(`http://127.0.0.1:${server.port}/metrics`).then(
        () => "answered",
        () => "refused",
      );
      expect(elsewhere).toBe("refused");
    } finally {
      await server.close();
    }
  });
});
