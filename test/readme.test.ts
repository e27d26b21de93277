import { spawn } from "node:child_process";
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alive, freePort, ROOT, userEnv } from "./e2e/processes.js";

/**
 * README.md, run as written, so that it stays true.
 *
 * - The commands that need no service (the tour) run one by one from the
 *   repository root; each must exit 0.
 * - The blocks that talk to a service run in order in ONE bash session, as a
 *   newcomer types them into a terminal, in a directory of their own (links to the
 *   repository's files, so what they write lands there): first the Quick start's
 *   `npx stepwise serve` (in the background, as in a second terminal), then each
 *   block as it is; a block that starts a service of its own is preceded by the
 *   Quick start's being stopped. The service uses no shared Redis: it starts its own
 *   `redis-server`, as on a fresh machine, and the test checks that the README's way
 *   of stopping it stops that too.
 *
 * What is not run as written, and why: `npm ci` (this suite runs after it), the suite
 * itself, the local Redis Cluster block (test/integration/cluster.test.ts starts one),
 * the port (8080 may be taken here: a free one stands for it) and the model
 * endpoint of `models.yaml` (tests never call out: a model server on loopback stands
 * for OpenAI's).
 */

/** Each ```sh block of a Markdown document, as its text (continuations kept). */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].map((b) => b[1]!);
}

/** The commands of a block: comments and blank lines dropped, continuations joined. */
export function shellCommands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

const README = readFileSync(join(ROOT, "README.md"), "utf8");
const blocks = shellBlocks(README);

const SUITE = /^npm ci && npm test$/m;
const CLUSTER = /scripts\/redis-cluster\.ts/;
const QUICK_START = /^npm ci && npx stepwise serve$/m;
/** A block that needs a running service, or starts one. */
const SERVICE = /localhost:8080|\bstepwise (serve|worker|machines|executions|approvals)\b|\baws /;
const OWN_SERVICE = /npx stepwise serve &/;

const tour = blocks.filter((b) => !SERVICE.test(b) && !SUITE.test(b)).flatMap(shellCommands);
const session = blocks.filter((b) => SERVICE.test(b) && !CLUSTER.test(b) && !QUICK_START.test(b));

/** What some commands must print besides exiting 0. */
const PRINTS: [RegExp, string][] = [
  [/stepwise --help/, "Commands:"],
  [/stepwise validate/, "definitions/agent-loop.asl.yaml: valid"],
  [/run definitions\/hello/, '"greeting": "Hello, world!"'],
  [/run definitions\/order-saga/, '"status": "PLACED"'],
  [/stepwise test definitions\/cases.jsonl/, " passed, 0 failed"],
  [/npm run conformance/, "cases.jsonl:"],
];

function sh(
  command: string,
  options: { cwd?: string; env?: Record<string, string>; shell?: string } = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(options.shell ?? "sh", ["-c", command], {
      cwd: options.cwd ?? ROOT,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("exit", (code) => resolve({ code, output }));
  });
}

describe("the README's commands", () => {
  it("are all run: only npm ci, the suite itself and the local cluster are left out", () => {
    expect(tour.length).toBeGreaterThanOrEqual(6);
    const leftOut = blocks.filter((b) => !session.includes(b) && !tour.some((c) => b.includes(c)));
    expect(leftOut.map((b) => shellCommands(b)[0])).toEqual([
      "npm ci && npx stepwise serve",
      "npm ci && npm test",
      "npx tsx scripts/redis-cluster.ts                        # a local 3-master cluster, prints its nodes",
    ]);
    // The Quick start's command is run (without npm ci) to serve the session.
    expect(session.length).toBeGreaterThanOrEqual(4);
  });

  it.each(tour)(
    "%s",
    async (command) => {
      const { code, output } = await sh(command);
      expect({ code, output }).toMatchObject({ code: 0 });
      for (const [pattern, text] of PRINTS)
        if (pattern.test(command)) expect(output).toContain(text);
    },
    60_000,
  );
});

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
