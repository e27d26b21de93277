import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./e2e/processes.js";

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

export const README = readFileSync(join(ROOT, "README.md"), "utf8");
export const blocks = shellBlocks(README);

export const SUITE = /^npm ci && npm test$/m;
export const CLUSTER = /scripts\/redis-cluster\.ts/;
export const QUICK_START = /^npm ci && npx stepwise serve$/m;
/** A block that needs a running service, or starts one. */
export const SERVICE =
  /localhost:8080|\bstepwise (serve|worker|machines|executions|approvals)\b|\baws /;
export const OWN_SERVICE = /npx stepwise serve &/;

export const tour = blocks.filter((b) => !SERVICE.test(b) && !SUITE.test(b)).flatMap(shellCommands);
export const session = blocks.filter(
  (b) => SERVICE.test(b) && !CLUSTER.test(b) && !QUICK_START.test(b),
);

/** What some commands must print besides exiting 0. */
export const PRINTS: [RegExp, string][] = [
  [/stepwise --help/, "Commands:"],
  [/stepwise validate/, "definitions/agent-loop.asl.yaml: valid"],
  [/run definitions\/hello/, '"greeting": "Hello, world!"'],
  [/run definitions\/order-saga/, '"status": "PLACED"'],
  [/stepwise test definitions\/cases.jsonl/, " passed, 0 failed"],
  [/npm run conformance/, "cases.jsonl:"],
];

export function sh(
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
