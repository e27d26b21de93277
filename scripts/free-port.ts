import { createServer } from "node:net";

/** A TCP port on 127.0.0.1 nothing listens on (for an own redis-server, a test's server). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address
          ? resolvePort(address.port)
          : reject(new Error("no port")),
      );
    });
    server.on("error", reject);
  });
}
