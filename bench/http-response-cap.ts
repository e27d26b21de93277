/**
 * What a huge HTTP task response costs: a local server offers 200 MB (chunked and
 * with Content-Length); the HTTP runner reads up to its cap (256 KiB) and closes the
 * connection. Prints, per variant and run, the time to the task's failure, the bytes
 * the server managed to write before its connection closed, and the RSS growth.
 *
 *   npx tsx bench/http-response-cap.ts [--runs N]
 *
 * Before the cap (issue 13) the same answer grew RSS by 1.6 GB before failing.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseEgressAllow } from "../task-runners/egress.js";
import { httpRunner } from "../task-runners/http.js";
import { describeFailure } from "../task-runners/runner.js";

const runsAt = process.argv.indexOf("--runs");
const RUNS = runsAt >= 0 ? Number(process.argv[runsAt + 1]) : 5;
const OFFER = 200 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, "x");
let written = 0;

const server = createServer((req, res) => {
  written = 0;
  res.writeHead(200, {
    "content-type": "text/plain",
    ...(req.url === "/announced" ? { "content-length": String(OFFER) } : {}),
  });
  const pump = (): void => {
    while (written < OFFER && !res.destroyed) {
      written += CHUNK.length;
      if (!res.write(CHUNK)) return void res.once("drain", pump);
    }
    if (!res.destroyed) res.end();
  };
  pump();
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as AddressInfo).port;
const runner = httpRunner({ egress: parseEgressAllow("127.0.0.1") });

const rssStart = process.memoryUsage().rss;
for (const path of ["/chunked", "/announced"]) {
  for (let i = 0; i < RUNS; i++) {
    const before = process.memoryUsage().rss;
    const t0 = performance.now();
    const outcome = await runner
      .run({
        resource: "http:invoke",
        stateName: "Big",
        taskId: `bench-${i}`,
        operationKey: `bench-${i}`,
        executionId: "bench",
        attempt: 1,
        input: { ApiEndpoint: `http://127.0.0.1:${port}${path}` },
        signal: new AbortController().signal,
      })
      .then(
        () => "succeeded (?)",
        (err: unknown) => describeFailure(err).error,
      );
    const ms = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 20));
    const grew = (process.memoryUsage().rss - before) / 1024 / 1024;
    console.log(
      `${path.padEnd(10)} run ${i + 1}: ${outcome} in ${ms.toFixed(1)} ms; server wrote ${(written / 1024).toFixed(0)} KiB of ${OFFER / 1024 / 1024} MB; RSS +${grew.toFixed(1)} MB`,
    );
  }
}
console.log(
  `RSS over all runs: +${((process.memoryUsage().rss - rssStart) / 1024 / 1024).toFixed(1)} MB`,
);
server.close();
