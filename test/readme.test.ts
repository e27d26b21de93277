import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./e2e/processes.js";

/**
 * The README's shell blocks, run as written from the repository root, so that the
 * README stays true: every command must exit 0. Only the commands that run a
 * service until stopped (`serve`, `worker`, the local cluster script), the ones that talk to such a running
 * service (`curl localhost:8080…`, the human-approval walkthrough: its steps are the
 * end-to-end tests of test/e2e/approvals.test.ts; the `stepwise machines|executions|
 * approvals` client, run by test/e2e/cli-client.test.ts) and the ones that are this suite
 * itself (`npm ci && npm test`) are left out; any other command runs here.
 */

/** The commands of a Markdown document's ```sh blocks (comments and blank lines dropped). */
export function shellCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)];
  return blocks.flatMap((block) =>
    block[1]!
      .replace(/\\\n\s*/g, " ")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#")),
  );
}

const LEFT_OUT = [
  /\bstepwise (serve|worker)\b/,
  // A local Redis Cluster, up until stopped (test/integration/cluster.test.ts starts one).
  /\bscripts\/redis-cluster\.ts\b/,
  /\blocalhost:8080\b/,
  // The client commands talk to a running service: test/e2e/cli-client.test.ts runs them.
  /\bstepwise (machines|executions|approvals)\b/,
  /^npm ci && npm test$/,
];
const commands = shellCommands(readFileSync(join(ROOT, "README.md"), "utf8"));
const tour = commands.filter((c) => !LEFT_OUT.some((pattern) => pattern.test(c)));

/** What some commands must print besides exiting 0. */
const PRINTS: [RegExp, string][] = [
  [/stepwise --help/, "Commands:"],
  [/stepwise validate/, "definitions/agent-loop.asl.yaml: valid"],
  [/run definitions\/hello/, '"greeting": "Hello, world!"'],
  [/run definitions\/order-saga/, '"status": "PLACED"'],
  [/stepwise test definitions\/cases.jsonl/, " passed, 0 failed"],
  [/npm run conformance/, "cases.jsonl:"],
];

function sh(command: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", command], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("exit", (code) => resolve({ code, output }));
  });
}

/** The newest modification time of the TypeScript sources under `dir`. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

// `npx stepwise` runs dist/, which `npm ci` builds; rebuild it when a source is newer
// (while developing), so the README is checked against the code as it is.
beforeAll(async () => {
  const sources = ["api", "cli", "engine", "runtime", "schema", "task-runners"].map((d) =>
    newestSource(join(ROOT, d)),
  );
  let built = 0;
  try {
    built = statSync(join(ROOT, "dist", "cli", "main.js")).mtimeMs;
  } catch {
    // not built
  }
  if (Math.max(...sources) > built) {
    const build = await sh("npx tsc -p tsconfig.build.json");
    expect(build.output).toBe("");
  }
}, 180_000);

describe("the README's commands", () => {
  it("are found, and only the long-running ones, their walkthrough and the suite itself are left out", () => {
    expect(tour.length).toBeGreaterThanOrEqual(6);
    const leftOut = commands.filter((c) => !tour.includes(c));
    const client = /\bstepwise (machines|executions|approvals)\b/;
    expect(leftOut.filter((c) => !/\blocalhost:8080\b/.test(c) && !client.test(c))).toEqual([
      "npm ci && npx stepwise serve",
      "npm ci && npm test",
      "npx tsx scripts/redis-cluster.ts                        # a local 3-master cluster, prints its nodes",
      "STEPWISE_REDIS_CLUSTER=127.0.0.1:7001,127.0.0.1:7002 npx stepwise serve",
      "STEPWISE_REDIS_CLUSTER=… STEPWISE_WORKER_SHARDS=0-7 npx stepwise worker   # or every shard",
      "npx stepwise serve &",
      "STEPWISE_MODEL_ENDPOINTS=models.yaml OPENAI_API_KEY=sk-… npx stepwise serve &",
    ]);
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
