import { request as httpRequest, Agent } from "node:http";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import fc from "fast-check";
import { SerializerSelector } from "@fastify/fast-json-stringify-compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_NAMES } from "../../api/errors.js";
import { KEYS, startStack, type Stack } from "./stack.js";

/**
 * Generated requests across every route of the OpenAPI document against a live
 * service: no answer is a 5xx, and every 4xx has the registry's shape
 * (`{error, message, details}` with a registered name). 10,000 requests per run;
 * `FUZZ_RUNS=100000` for a longer one. fast-check prints the seed and the shrunk
 * request of a failure, so it can be replayed.
 */
const REQUESTS = Number(process.env.FUZZ_RUNS ?? 10_000);
const BATCH = 10;
let stack: Stack;
let port: number;
let routes: { method: string; path: string }[];
let doc: { paths: Record<string, Record<string, Record<string, unknown>>> };
const agent = new Agent({ keepAlive: true, maxSockets: BATCH });

beforeAll(async () => {
  stack = await startStack();
  port = Number(new URL(stack.url).port);
  doc = (await stack.client.get("/docs/json", { key: null })).body as typeof doc;
  routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => ({ method, path })),
  );
  // Something for the generated names to find now and then.
  await stack.client.post("/v1/state-machines", {
    name: "fz",
    definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
  });
});
afterAll(async () => {
  agent.destroy();
  await stack?.close();
});

/**
 * The service compiles a route's request validators on the route's first request
 * (api/validation.ts) and without the meta-schema check; here each of them, for every
 * route, is checked and compiled once, so a malformed schema fails the suite rather
 * than the first user of a rarely used route.
 */
describe("request schemas", () => {
  it("are valid JSON Schema and compile, for every route of the OpenAPI document", () => {
    const ajv = new Ajv({ strict: false, validateSchema: true });
    (addFormats as unknown as (a: Ajv, f: string[]) => void)(ajv, ["date-time"]);
    let compiled = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const parameters = (op.parameters ?? []) as { schema?: object }[];
        const content = (op.requestBody as { content?: Record<string, { schema?: object }> })
          ?.content;
        const schemas = [
          ...parameters.map((p) => p.schema),
          ...Object.values(content ?? {}).map((c) => c.schema),
        ].filter((schema) => schema !== undefined);
        for (const schema of schemas) {
          expect(() => ajv.compile(schema), `${method} ${path}`).not.toThrow();
          compiled += 1;
        }
      }
    }
    expect(compiled).toBeGreaterThan(50);
  });

  // Their response serializers, compiled by the service on first use (api/validation.ts
  // `lazySerializers`) with fastify's own factory: compiled here, each once.
  it("and every response schema compiles into a serializer", () => {
    const compile = SerializerSelector()({}, {});
    let compiled = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const responses = (op.responses ?? {}) as Record<
          string,
          { content?: Record<string, { schema?: { $ref?: string } }> }
        >;
        for (const [status, response] of Object.entries(responses)) {
          const schema = response.content?.["application/json"]?.schema;
          // The shared Error schema, by reference: compiled with every route's error statuses.
          if (!schema || schema.$ref) continue;
          const route = { method, url: path, httpStatus: status, schema };
          expect(() => compile(route), `${method} ${path} ${status}`).not.toThrow();
          compiled += 1;
        }
      }
    }
    expect(compiled).toBeGreaterThan(50);
  });
});

const segment = fc.oneof(
  fc.constantFrom("fz", "x", "..", ".", "%", "%zz", "a%2Fb", "-", "0", "\u00e9", "a".repeat(1200)),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 20 }),
);
const query = fc.dictionary(
  fc.oneof(
    fc.constantFrom("wait", "cursor", "limit", "status", "stateMachine", "reverse", "version"),
    fc.string({ maxLength: 8 }),
  ),
  fc.oneof(
    // Never a long valid wait: a long poll would only make the run slow.
    fc.constantFrom("0", "-1", "1e3", "abc", "", "99999", "true", "RUNNING", "%00"),
    fc.string({ maxLength: 30 }),
  ),
  { maxKeys: 3 },
);
const body = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 4 }).map((v) => ({ type: "application/json", text: JSON.stringify(v) })),
  fc
    .record(
      {
        input: fc.jsonValue({ maxDepth: 3 }),
        name: fc.string({ maxLength: 90 }),
        definition: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 200 })),
        output: fc.jsonValue({ maxDepth: 3 }),
        decision: fc.constantFrom("APPROVE", "REJECT", "MAYBE"),
      },
      { requiredKeys: [] },
    )
    .map((v) => ({ type: "application/json", text: JSON.stringify(v) })),
  fc.string({ maxLength: 200 }).map((text) => ({
    type: "application/json",
    text,
  })),
  fc
    .tuple(
      fc.constantFrom(
        "application/yaml",
        "text/plain",
        "text/html",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin1",
      ),
      fc.string({ maxLength: 200 }),
    )
    .map(([type, text]) => ({ type, text })),
);
const generated = fc.record({
  route: fc.nat(),
  method: fc.option(fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"), {
    freq: 4,
  }),
  params: fc.array(segment, { minLength: 3, maxLength: 3 }),
  query,
  body,
  key: fc.constantFrom(KEYS.admin, KEYS.run, KEYS.callback, "wrong-secret-0123456789", null),
});
type Generated = typeof generated extends fc.Arbitrary<infer T> ? T : never;

function send(
  g: Generated,
): Promise<{ status: number; text: string; type: string; request: string }> {
  const route = routes[g.route % routes.length]!;
  let n = 0;
  const path = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(g.params[n++] ?? ""));
  // A long poll answers after its wait (an activity poll waits 20 s when none is
  // given): valid waits are made 0, so the run measures answers, not waiting.
  const q = { ...g.query };
  if (path.startsWith("/v1/activities/") && q.wait === undefined) q.wait = "0";
  if (q.wait !== undefined && Number(q.wait) > 0 && Number(q.wait) <= 3600) q.wait = "0";
  const qs = Object.entries(q)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
  const method = g.method ?? route.method.toUpperCase();
  const url = qs ? `${path}?${qs}` : path;
  const headers: Record<string, string> = {};
  if (g.key) headers.authorization = `Bearer ${g.key}`;
  const payload = g.body && method !== "GET" && method !== "HEAD" ? g.body.text : undefined;
  if (g.body) headers["content-type"] = g.body.type;
  // Node's client frames a DELETE or OPTIONS body only when told its length.
  if (payload !== undefined) headers["content-length"] = String(Buffer.byteLength(payload));
  const described = `${method} ${url}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, method, path: url, headers, agent },
      (res) => {
        const type = String(res.headers["content-type"] ?? "");
        if (type.startsWith("text/event-stream")) {
          // A live stream (SSE) answers for as long as it is read: its status is the answer.
          res.destroy();
          resolve({ status: res.statusCode ?? 0, text: "", type, request: described });
          return;
        }
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            text,
            type: String(res.headers["content-type"] ?? ""),
            request: described,
          }),
        );
      },
    );
    req.on("error", reject);
    // No answer may hang: a request still open after 15 s fails the run, naming itself.
    req.setTimeout(15_000, () => {
      req.destroy();
      reject(new Error(`no answer within 15 s: ${described}`));
    });
    req.end(payload);
  });
}

describe("fuzzing every route", () => {
  it(`${REQUESTS} generated requests: no 5xx, every 4xx from the registry`, async () => {
    const names = new Set<string>();
    let succeeded = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(generated, { minLength: BATCH, maxLength: BATCH }),
        async (batch) => {
          const answers = await Promise.all(batch.map(send));
          for (const a of answers) {
            expect(a.status, `${a.request} → ${a.status} ${a.text.slice(0, 300)}`).toBeLessThan(
              500,
            );
            if (a.status < 400) succeeded++;
            if (a.status < 400 || a.request.startsWith("HEAD")) continue;
            const parsed = JSON.parse(a.text) as Record<string, unknown>;
            expect(Object.keys(parsed).sort(), `${a.request}: ${a.text.slice(0, 300)}`).toEqual([
              "details",
              "error",
              "message",
            ]);
            expect(ERROR_NAMES, a.request).toContain(parsed.error);
            names.add(parsed.error as string);
          }
        },
      ),
      // No shrinking: a failing batch is reported as it came (each shrink step re-sends requests).
      { numRuns: Math.ceil(REQUESTS / BATCH), endOnFailure: true },
    );
    // The requests reach past authentication and validation, not only into a 401.
    console.log(
      `fuzz: ${succeeded} answered 2xx/3xx; errors seen: ${[...names].sort().join(", ")}`,
    );
    expect(succeeded).toBeGreaterThan(0);
    expect(names.size).toBeGreaterThanOrEqual(6);
  }, 600_000);
});

/**
 * Generated hostile expressions and inputs (issue 44): regular expressions that
 * backtrack exponentially or quadratically in a backtracking engine, over texts of
 * generated lengths, through every JSONata function that takes one; and inputs nested
 * up to 250 deep under JSONPath recursive descents. Each goes through TestState while
 * `/health` is polled: it ends in its answer or in an ASL error, never a 5xx, within a
 * bound no input can exceed, and the service answers its health checks meanwhile.
 * `HOSTILE_RUNS` for more than 30 (the seed of a failure replays it).
 */
const HOSTILE_RUNS = Number(process.env.HOSTILE_RUNS ?? 30);

const regexCase = fc
  .record({
    pattern: fc.oneof(
      fc.integer({ min: 2, max: 8 }).map((k) => `${"a*".repeat(k)}b`),
      fc.constantFrom("^(a|a)+$", "(a+)+b", "(a*)*b", "^(a|aa)+$", "(.*a){12}", "a*b|a"),
    ),
    length: fc.integer({ min: 20, max: 5_000 }),
    call: fc.constantFrom("$match(T, R)", "$replace(T, R, 'c')", "$contains(T, R)", "$split(T, R)"),
  })
  .map(({ pattern, length, call }) => ({
    label: `${call} with /${pattern}/ over ${length} a's`,
    state: {
      QueryLanguage: "JSONata",
      Type: "Pass",
      Output: `{% ${call.replace("T", `$pad('', ${length}, 'a') & '!'`).replace("R", `/${pattern}/`)} %}`,
      End: true,
    },
    input: {} as unknown,
  }));

const deepCase = fc
  .record({ depth: fc.integer({ min: 20, max: 250 }), descents: fc.integer({ min: 1, max: 4 }) })
  .map(({ depth, descents }) => {
    let input: unknown = 1;
    for (let i = 0; i < depth; i++) input = { a: input };
    return {
      label: `$${"..a".repeat(descents)} over input nested ${depth} deep`,
      state: { Type: "Pass", InputPath: `$${"..a".repeat(descents)}`, End: true },
      input,
    };
  });

describe("fuzzing expressions", () => {
  beforeAll(async () => {
    // TestState's first request compiles its validators and serializers (once, on first
    // use: api/validation.ts), which is not what is measured here.
    await stack.client.post("/v1/state-machines/test-state", {
      definition: { Type: "Pass", End: true },
      input: {},
    });
  });

  it(`${HOSTILE_RUNS} generated slow expressions and deep inputs: answered, the service responsive`, async () => {
    let slowest = { ms: 0, label: "" };
    let slowestHealth = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(regexCase, deepCase), async ({ label, state, input }) => {
        let done = false;
        const health: { status: number; ms: number }[] = [];
        const poller = (async () => {
          while (!done) {
            const started = performance.now();
            const reply = await stack.client.get("/health", { key: null });
            health.push({ status: reply.status, ms: performance.now() - started });
            await new Promise((r) => setTimeout(r, 20));
          }
        })();
        const started = performance.now();
        const reply = await stack.client.post("/v1/state-machines/test-state", {
          definition: state,
          input,
        });
        const ms = performance.now() - started;
        done = true;
        await poller;
        expect(reply.status, `${label}: ${JSON.stringify(reply.body).slice(0, 300)}`).toBe(200);
        const body = reply.body as { status: string; error?: string };
        if (body.status !== "SUCCEEDED") {
          expect(body.status, label).toBe("FAILED");
          expect(
            ["States.QueryEvaluationError", "States.Runtime", "States.DataLimitExceeded"],
            `${label}: ${JSON.stringify(body).slice(0, 300)}`,
          ).toContain(body.error);
        }
        // Unbounded, the worst of these ran for minutes; the budget ends each within about
        // a second of CPU (a generous bound on a shared machine).
        expect(ms, label).toBeLessThan(10_000);
        for (const h of health) expect(h.status, label).toBe(200);
        // Meanwhile the service answers: a step past the serving thread's slice runs on
        // the evaluation thread (runtime/offload/). This service has just answered 10,000
        // fuzzed requests, and a collection of its grown heap, under the whole suite's
        // load, can hold it for a few hundred ms (seen: 329 ms): the 100 ms bound is held
        // on a fresh service by expression-budget.test.ts; here, no second-long stall.
        const worstHealth = Math.max(0, ...health.map((h) => h.ms));
        expect(worstHealth, label).toBeLessThan(1_000);
        if (ms > slowest.ms) slowest = { ms, label };
        slowestHealth = Math.max(slowestHealth, worstHealth);
      }),
      { numRuns: HOSTILE_RUNS, endOnFailure: true },
    );
    console.log(
      `fuzz expressions: slowest answer ${Math.round(slowest.ms)} ms (${slowest.label}); slowest /health meanwhile ${Math.round(slowestHealth)} ms`,
    );
  }, 600_000);
});
