/**
 * StartSyncExecution throughput: an EXPRESS 3-state Pass machine run to its end in
 * the API process, over a real socket, through the whole AWS endpoint (JSON 1.0,
 * SigV4 verified on every request, the machine's version read from Redis).
 *
 *   npx tsx bench/sync-execution.ts [--api-processes N] [--rounds R] [--concurrency C]
 *                                   [--seconds S | --node-client --requests N] [--no-anchor]
 *
 * The server: by default the API built in this process (one core, no logger); with
 * `--api-processes N`, `stepwise serve --no-worker` with STEPWISE_API_PROCESSES=N,
 * as deployed (its Node cluster shares the port between N processes).
 *
 * The client: requests are signed once (with @smithy/signature-v4, as the SDKs sign)
 * and sent many times, so the figure is the server's, not the signing client's; the
 * server still verifies each one. They are sent by wrk (Debian's `wrk`, a C load
 * generator) when it is installed, for S seconds a round; else, or with
 * `--node-client`, by a Node process that costs about as much CPU per request as
 * the server (`--same-thread` sends from the server's own thread). On two cores the
 * client competes with the server.
 *
 * The anchor (skipped with `--no-anchor`): the same machine in aws-local-stepfunctions
 * behind a bare fastify route (`anchorServer`), loaded by the same client, round by
 * round in turn with Stepwise, so both see the same neighbours; the ratio is
 * Stepwise's rate over the anchor's in the same round. Target: ≥ 0.6×.
 * Uses a random Redis prefix and deletes its keys afterwards.
 */
import { randomBytes } from "node:crypto";
import { Agent, request } from "node:http";
import { connect, createServer, type AddressInfo } from "node:net";
import { spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Hash } from "@smithy/hash-node";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";
import fastify from "fastify";
import { Redis } from "ioredis";
import { parseApiKeys } from "../api/auth.js";
import { buildServer } from "../api/server.js";
import { createRedisRuntime } from "../runtime/runtime.js";
import { loadAnchor } from "./anchors.js";

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const raw = i >= 0 ? process.argv[i + 1] : undefined;
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
}

const REQUESTS = option("requests", 20_000);
const CONCURRENCY = option("concurrency", 64);
/** Rounds of the load, one after another: on a shared machine one round can be 30% off. */
const ROUNDS = option("rounds", 3);
/** Length of a round sent by wrk, which runs for a time rather than a count. */
const SECONDS = option("seconds", 5);
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const SECRET = "bench-secret-0123456789abcdef";

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

async function signed(port: number, target: string, body: unknown) {
  const signer = new SignatureV4({
    credentials: { accessKeyId: "bench", secretAccessKey: SECRET },
    region: "us-east-1",
    service: "states",
    sha256: Hash.bind(null, "sha256"),
  });
  const text = JSON.stringify(body);
  const req = await signer.sign(
    new HttpRequest({
      method: "POST",
      protocol: "http:",
      hostname: "127.0.0.1",
      port,
      path: "/",
      headers: {
        host: `127.0.0.1:${port}`,
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": `AWSStepFunctions.${target}`,
      },
      body: text,
    }),
  );
  return { headers: req.headers, body: text };
}

function send(
  port: number,
  call: { headers: Record<string, string>; body: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/", method: "POST", agent, headers: call.headers },
      (res) => {
        let data = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (data += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on("error", reject);
    req.end(call.body);
  });
}

interface Load {
  seconds: number;
  failures: number;
}

/** Sends the same signed call `requests` times, CONCURRENCY at once. */
async function load(job: {
  port: number;
  call: { headers: Record<string, string>; body: string };
  requests: number;
}): Promise<Load> {
  // A load generator as wrk is: the request's bytes built once, written on
  // keep-alive sockets with one request in flight each, and each answer read only
  // for its status line, length and outcome, so the figure is the server's.
  const head = Object.entries(job.call.headers)
    .filter(([name]) => name.toLowerCase() !== "content-length")
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  const body = Buffer.from(job.call.body);
  const bytes = Buffer.concat([
    Buffer.from(`POST / HTTP/1.1\r\n${head}content-length: ${body.length}\r\n\r\n`),
    body,
  ]);
  let sent = 0;
  let failures = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from(
      { length: CONCURRENCY },
      () =>
        new Promise<void>((resolve, reject) => {
          const socket = connect(job.port, "127.0.0.1");
          socket.setNoDelay(true);
          let pending: Buffer = Buffer.alloc(0);
          const next = (): void => {
            if (sent >= job.requests) {
              socket.end();
              resolve();
              return;
            }
            sent++;
            socket.write(bytes);
          };
          socket.on("connect", next);
          socket.on("error", reject);
          socket.on("data", (chunk: Buffer) => {
            pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
            for (;;) {
              const end = pending.indexOf("\r\n\r\n");
              if (end < 0) return;
              const header = pending.toString("latin1", 0, end);
              const length = Number(/content-length: *(\d+)/i.exec(header)?.[1] ?? NaN);
              if (!Number.isFinite(length)) throw new Error(`no content-length in ${header}`);
              if (pending.length < end + 4 + length) return;
              const answer = pending.toString("utf8", end + 4, end + 4 + length);
              if (!header.startsWith("HTTP/1.1 200") || !answer.includes('"SUCCEEDED"')) failures++;
              pending = pending.subarray(end + 4 + length);
              next();
            }
          });
        }),
    ),
  );
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, failures };
}

/**
 * The same call sent by wrk (Debian's `wrk`, a C load generator on one thread),
 * for `--seconds` each round: a Node client costs about as much CPU per request as
 * the server, and on two cores the two compete. wrk's Lua `response` hook counts
 * answers that are not a 200 SUCCEEDED.
 */
async function loadFromWrk(job: {
  port: number;
  call: { headers: Record<string, string>; body: string };
  seconds: number;
}): Promise<{ requests: number; seconds: number; failures: number }> {
  const dir = mkdtempSync(join(tmpdir(), "stepwise-wrk-"));
  try {
    const lua = [
      `wrk.method = "POST"`,
      `wrk.body = ${JSON.stringify(job.call.body)}`,
      ...Object.entries(job.call.headers)
        .filter(([name]) => !["content-length", "host"].includes(name.toLowerCase()))
        .map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`),
      // Each wrk thread has its own Lua state: done() reads their counts.
      `local threads = {}`,
      `function setup(thread) table.insert(threads, thread) end`,
      `failed = 0`,
      `function response(status, headers, body)`,
      `  if status ~= 200 or not string.find(body, '"SUCCEEDED"', 1, true) then failed = failed + 1 end`,
      `end`,
      `function done(summary, latency, requests)`,
      `  local n = 0`,
      `  for _, t in ipairs(threads) do n = n + t:get("failed") end`,
      `  io.write(string.format("RESULT %d %d %d\\n", summary.requests, summary.duration, n))`,
      `end`,
    ].join("\n");
    writeFileSync(join(dir, "call.lua"), lua);
    // Not spawnSync: the server answering wrk runs on this thread.
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        "wrk",
        [
          "-t1",
          `-c${CONCURRENCY}`,
          `-d${job.seconds}s`,
          "-s",
          join(dir, "call.lua"),
          `http://127.0.0.1:${job.port}/`,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      let text = "";
      child.stdout.on("data", (c: Buffer) => (text += c.toString()));
      child.once("error", (e) =>
        reject(new Error(`wrk could not run (apt-get install -y wrk): ${e.message}`)),
      );
      child.once("exit", () => resolve(text));
    });
    const m = /RESULT (\d+) (\d+) (\d+)/.exec(out);
    if (!m) throw new Error(`wrk said: ${out}`);
    return { requests: Number(m[1]), seconds: Number(m[2]) / 1e6, failures: Number(m[3]) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same load, sent by a child process (this file with `--client`): the server keeps its core. */
function loadFromAnotherProcess(job: Parameters<typeof load>[0]): Promise<Load> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", fileURLToPath(import.meta.url), "--client"],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out) as Load) : reject(new Error(`client exited ${code}`)),
    );
    child.stdin.end(JSON.stringify(job));
  });
}

function wrkInstalled(): boolean {
  return (process.env.PATH ?? "").split(":").some((dir) => {
    try {
      accessSync(join(dir, "wrk"), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

interface Server {
  port: number;
  close(): Promise<void>;
}

/** The API built in this process (no logger, no admission control). */
async function inProcess(prefix: string): Promise<Server> {
  const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
  const app = await buildServer({ runtime, apiKeys: parseApiKeys(`bench:admin:${SECRET}`) });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    port: (app.server.address() as AddressInfo).port,
    close: async () => {
      await app.close();
      await runtime.close();
    },
  };
}

/**
 * `stepwise serve --no-worker --api-processes N`, as deployed: warn-level logs (info
 * logs two lines per request) and no start rate limit (300/s per key by default).
 */
async function served(prefix: string, processes: number): Promise<Server> {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const main = fileURLToPath(new URL("../cli/main.ts", import.meta.url));
  const script = `import { main } from ${JSON.stringify(main)};
    const io = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };
    process.exitCode = await main(process.argv.slice(1), io);`;
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script, "serve", "--no-worker"],
    {
      env: {
        ...process.env,
        REDIS_URL,
        PORT: String(port),
        HOST: "127.0.0.1",
        STEPWISE_PREFIX: prefix,
        STEPWISE_API_KEYS: `bench:admin:${SECRET}`,
        STEPWISE_API_PROCESSES: String(processes),
        STEPWISE_START_RATE: "0",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`stepwise serve exited ${child.exitCode}`);
    const up = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (tries > 600) throw new Error("stepwise serve did not answer /health within 60 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    close: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The machine both sides run: three Pass states. */
const DEFINITION = JSON.stringify({
  StartAt: "A",
  States: {
    A: { Type: "Pass", Next: "B" },
    B: { Type: "Pass", Next: "C" },
    C: { Type: "Pass", Result: { done: true }, End: true },
  },
});

const ANCHOR_VERSION = "3.0.0";

interface LocalStepFunctions {
  StateMachine: new (definition: object) => {
    run(input: unknown): { result: Promise<unknown> };
  };
}

/**
 * The anchor: a bare fastify server (no logger, no hooks) whose one POST route runs
 * the same definition in aws-local-stepfunctions and answers JSON, the floor of what
 * an HTTP front of an in-process ASL interpreter costs. The machine is built once (its
 * constructor validates the definition, ~100 ms), as Stepwise compiles a version once.
 * It reads the same StartSyncExecution body but checks no signature.
 */
async function anchorServer(definition: object): Promise<Server> {
  const { StateMachine } = loadAnchor<LocalStepFunctions>(
    "aws-local-stepfunctions",
    ANCHOR_VERSION,
  );
  const machine = new StateMachine(definition);
  const app = fastify();
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => done(null, body));
  app.post("/", async (request, reply) => {
    const { input } = JSON.parse(request.body as string) as { input: string };
    const output = await machine.run(JSON.parse(input)).result;
    return reply
      .type("application/x-amz-json-1.0")
      .send(JSON.stringify({ status: "SUCCEEDED", output: JSON.stringify(output) }));
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
}

/** A server the same signed call is sent to, and the rates it answered each round. */
interface Side {
  label: string;
  port: number;
  rates: number[];
  /** The server's CPU time per request (µs), when it runs in this process. */
  cpu: number[];
}

async function main(): Promise<void> {
  const prefix = `stepwise-bench-${randomBytes(4).toString("hex")}`;
  const processes = process.argv.includes("--api-processes") ? option("api-processes", 1) : 0;
  const server = processes > 0 ? await served(prefix, processes) : await inProcess(prefix);
  const withAnchor = !process.argv.includes("--no-anchor");
  const anchor = withAnchor ? await anchorServer(JSON.parse(DEFINITION) as object) : undefined;
  const port = server.port;
  try {
    const created = await send(
      port,
      await signed(port, "CreateStateMachine", {
        name: "bench",
        definition: DEFINITION,
        roleArn: "r",
        type: "EXPRESS",
      }),
    );
    const { stateMachineArn } = JSON.parse(created.body) as { stateMachineArn: string };
    const call = await signed(port, "StartSyncExecution", { stateMachineArn, input: '{"n":1}' });
    const sides: Side[] = [{ label: "Stepwise", port, rates: [], cpu: [] }];
    if (anchor) sides.push({ label: "anchor", port: anchor.port, rates: [], cpu: [] });
    // Warm up (JIT, connections); the anchor ignores the signature, so the bytes are the same.
    for (const side of sides) for (let i = 0; i < 500; i++) await send(side.port, call);
    const sameThread = process.argv.includes("--same-thread");
    const wrk = !sameThread && !process.argv.includes("--node-client") && wrkInstalled();
    // Each API process compiles its hot paths only under load: a round before the counted ones.
    if (wrk) for (const side of sides) await loadFromWrk({ port: side.port, call, seconds: 3 });
    const ratios: number[] = [];
    // The server's CPU per request, less noisy than a rate on a shared machine, is
    // this process's own when the server runs here and the client elsewhere.
    const cpuHere = (side: Side): boolean =>
      !sameThread && (side.label === "anchor" || processes === 0);
    for (let round = 1; round <= ROUNDS; round++) {
      // Interleaved, first one side then the other, so that a noisy neighbour's
      // burst weighs on both alike.
      const order = round % 2 === 1 ? sides : [...sides].reverse();
      for (const side of order) {
        const before = process.cpuUsage();
        const { requests, seconds, failures } = wrk
          ? await loadFromWrk({ port: side.port, call, seconds: SECONDS })
          : {
              requests: REQUESTS,
              ...(sameThread
                ? await load({ port: side.port, call, requests: REQUESTS })
                : await loadFromAnotherProcess({ port: side.port, call, requests: REQUESTS })),
            };
        side.rates.push(requests / seconds);
        const used = process.cpuUsage(before);
        const perRequest = (used.user + used.system) / requests;
        if (cpuHere(side)) side.cpu.push(perRequest);
        console.log(
          `round ${round} ${side.label}: ${requests} executions in ${seconds.toFixed(2)} s = ${fmt(requests / seconds)}/s (${failures} failed)` +
            (cpuHere(side) ? `, server CPU ${Math.round(perRequest)} µs/request` : ""),
        );
      }
      if (anchor) ratios.push(sides[0]!.rates.at(-1)! / sides[1]!.rates.at(-1)!);
    }
    const where =
      processes > 0
        ? `stepwise serve, ${processes} API process(es)`
        : "the API in the bench's process";
    const client = wrk ? "wrk" : sameThread ? "on the server's thread" : "another Node process";
    console.log(
      `StartSyncExecution, 3-state Pass machine, ${where}: ${spread(sides[0]!.rates, fmt)}/s over ${ROUNDS} round(s) (concurrency ${CONCURRENCY}, client ${client})`,
    );
    if (anchor) {
      console.log(
        `anchor, aws-local-stepfunctions ${ANCHOR_VERSION} on a bare fastify route, no signature: ${spread(sides[1]!.rates, fmt)}/s`,
      );
      console.log(
        `ratio Stepwise / anchor, round by round: ${spread(ratios, (r) => r.toFixed(2))}`,
      );
      if (sides.every((side) => side.cpu.length > 0)) {
        const cpuRatios = sides[1]!.cpu.map((anchorCpu, i) => anchorCpu / sides[0]!.cpu[i]!);
        console.log(
          `server CPU per request: Stepwise ${spread(sides[0]!.cpu, fmt)} µs, anchor ${spread(sides[1]!.cpu, fmt)} µs; anchor / Stepwise ${spread(cpuRatios, (r) => r.toFixed(2))}`,
        );
      }
    }
  } finally {
    await anchor?.close();
    await server.close();
    const redis = new Redis(REDIS_URL);
    let cursor = "0";
    do {
      const [nextCursor, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = nextCursor;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== "0");
    redis.disconnect();
    agent.destroy();
  }
}

const fmt = (r: number): string => Math.round(r).toLocaleString("en-US");

/** `median M (min A, max B)` of a round's figures. */
function spread(values: number[], show: (v: number) => string): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `median ${show(sorted[Math.floor(sorted.length / 2)]!)} (min ${show(sorted[0]!)}, max ${show(sorted.at(-1)!)})`;
}

if (process.argv.includes("--client")) {
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  process.stdout.write(JSON.stringify(await load(JSON.parse(text) as Parameters<typeof load>[0])));
  agent.destroy();
} else {
  await main();
}
