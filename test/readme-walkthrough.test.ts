import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alive, freePort, ROOT, userEnv } from "./e2e/processes.js";
import {
  blocks,
  OWN_SERVICE,
  QUICK_START,
  README,
  session,
  sh,
  shellCommands,
} from "./readme-blocks.js";

/**
 * README.md's walkthroughs against a service, in one bash session (see
 * readme-blocks.ts); a file of its own so that it runs beside the rest.
 */
describe("the README's walkthroughs against a service", () => {
  let dir: string;
  let model: Server;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "stepwise-readme-"));
    for (const entry of readdirSync(ROOT)) {
      if (entry === ".git" || entry === ".stepwise") continue;
      symlinkSync(join(ROOT, entry), join(dir, entry));
    }
    // An OpenAI-compatible endpoint on loopback that answers at once, without tools.
    model = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            id: "chatcmpl-1",
            object: "chat.completion",
            model: "gpt-4o-mini",
            choices: [
              {
                index: 0,
                message: { role: "assistant", content: "Lisbon is warmer." },
                finish_reason: "stop",
              },
            ],
            usage: { prompt_tokens: 20, completion_tokens: 5 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve));
    const models = [...README.matchAll(/^`models\.yaml`:\n\n```yaml\n([\s\S]*?)^```/gm)][0]![1]!;
    const url = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
    writeFileSync(join(dir, "models.yaml"), models.replace("https://api.openai.com/v1", url));
  });
  afterAll(async () => {
    await new Promise((resolve) => model?.close(resolve));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("run as written, and the documented way of stopping the service stops it and its Redis", async () => {
    const port = await freePort();
    const redisPort = await freePort();
    const health = `curl -sf localhost:${port}/health > /dev/null`;
    // Stopped means gone, its private redis-server too, as the next service needs both ports.
    const gone = `while ${health} || redis-cli -p ${redisPort} ping > /dev/null 2>&1; do sleep 0.2; done`;
    const quickStart = shellCommands(blocks.find((b) => QUICK_START.test(b))!)[0]!.replace(
      "npm ci && ",
      "",
    );
    const steps = [
      "set -euo pipefail",
      "set -x",
      // The Quick start, as in a second terminal.
      `${quickStart} & QUICK=$!`,
      `until ${health}; do sleep 0.2; done`,
    ];
    let quickRunning = true;
    for (const block of session) {
      if (OWN_SERVICE.test(block) && quickRunning) {
        steps.push("kill $QUICK", gone);
        quickRunning = false;
      }
      steps.push(block.replaceAll("localhost:8080", `localhost:${port}`));
      if (OWN_SERVICE.test(block)) steps.push(gone);
    }
    if (quickRunning) steps.push("kill $QUICK", gone);
    const script = steps.join("\n");
    const { code, output } = await sh(script, {
      cwd: dir,
      shell: "bash",
      env: userEnv({
        PORT: String(port),
        STEPWISE_URL: `http://127.0.0.1:${port}`,
        // Nothing answers there: serve starts its own redis-server, as on a new machine.
        STEPWISE_LOCAL_REDIS_PORT: String(redisPort),
        // npx installs the project into its cache once per directory and would run its
        // `prepare` (tsc, the console build) there: through the links, into this
        // repository's dist/ while other test files run it. `npm ci` built it already.
        npm_config_ignore_scripts: "true",
      }),
    });
    expect(code, output.slice(-8000)).toBe(0);
    // What the walkthroughs say they show.
    expect(output).toMatch(/"status": "PAUSED"|PAUSED/);
    expect(output).toMatch(/audit.jsonl: OK: \d+ events of arn:aws:states:/);
    expect(output).toContain('"name": "payment"');
    expect(output).toMatch(/SUCCEEDED/);
    expect(output).toContain("PAID");
    expect(output).toContain("Lisbon is warmer.");
    // Every service and redis-server it started is gone.
    const services = output.match(/started a private redis-server there \(pid (\d+)/g) ?? [];
    expect(services.length).toBeGreaterThanOrEqual(2);
    for (const line of services) expect(alive(Number(/pid (\d+)/.exec(line)![1]))).toBe(false);
    const left = await sh(`curl -s -o /dev/null -w '%{http_code}' localhost:${port}/health`);
    expect(left.output).toBe("000");
  }, 180_000);
});
