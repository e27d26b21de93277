/**
 * StartSyncExecution throughput: an EXPRESS 3-state Pass machine run to its end in
 * the API process, over a real socket, through the whole AWS endpoint (JSON 1.0,
 * SigV4 verified on every request, the machine's version read from Redis).
 *
 *   npx tsx bench/sync-execution.ts [--requests N] [--concurrency C] [--rounds R]
 *
 * Requests are signed once (with @smithy/signature-v4, as the SDKs sign) and sent
 * many times, from another process, so the figure is the server's, not the signing
 * client's: the server still verifies each one, and the client's HTTP work runs on
 * another core (`--same-thread` sends from the server's own thread, as this bench
 * first did). Target: ≥ 5,000 executions/s.
 * Uses a random Redis prefix and deletes its keys afterwards.
 */
import { randomBytes } from "node:crypto";
import { Agent, request } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Hash } from "@smithy/hash-node";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";
import { Redis } from "ioredis";
import { parseApiKeys } from "../api/auth.js";
import { buildServer } from "../api/server.js";
import { createRedisRuntime } from "../runtime/runtime.js";

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

async function main(): Promise<void> {
  const prefix = `stepwise-bench-${randomBytes(4).toString("hex")}`;
  const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
  const app = await buildServer({ runtime, apiKeys: parseApiKeys(`bench:admin:${SECRET}`) });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const port = (app.server.address() as AddressInfo).port;
  try {
    const definition = JSON.stringify({
      StartAt: "A",
      States: {
        A: { Type: "Pass", Next: "B" },
        B: { Type: "Pass", Next: "C" },
        C: { Type: "Pass", Result: { done: true }, End: true },
      },
    });
    const created = await send(
      port,
      await signed(port, "CreateStateMachine", {
        name: "bench",
        definition,
        roleArn: "r",
        type: "EXPRESS",
      }),
    );
    const { stateMachineArn } = JSON.parse(created.body) as { stateMachineArn: string };
    const call = await signed(port, "StartSyncExecution", { stateMachineArn, input: '{"n":1}' });
    for (let i = 0; i < 500; i++) await send(port, call); // warm up (JIT, connections)
    const sameThread = process.argv.includes("--same-thread");
    const rates: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const { seconds, failures } = sameThread
        ? await load({ port, call, requests: REQUESTS })
        : await loadFromAnotherProcess({ port, call, requests: REQUESTS });
      rates.push(REQUESTS / seconds);
      console.log(
        `round ${round}: ${REQUESTS} executions in ${seconds.toFixed(2)} s = ${Math.round(REQUESTS / seconds).toLocaleString("en-US")}/s (${failures} failed)`,
      );
    }
    const sorted = [...rates].sort((a, b) => a - b);
    const fmt = (r: number) => Math.round(r).toLocaleString("en-US");
    console.log(
      `StartSyncExecution, 3-state Pass machine: median ${fmt(sorted[Math.floor(sorted.length / 2)]!)}/s over ${ROUNDS} round(s) (min ${fmt(sorted[0]!)}, max ${fmt(sorted.at(-1)!)}; concurrency ${CONCURRENCY}, client ${sameThread ? "on the server's thread" : "in another process"})`,
    );
  } finally {
    await app.close();
    await runtime.close();
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

if (process.argv.includes("--client")) {
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  process.stdout.write(JSON.stringify(await load(JSON.parse(text) as Parameters<typeof load>[0])));
  agent.destroy();
} else {
  await main();
}
