import { describe, expect, it } from "vitest";
import { ConfigError, loadClientConfig, loadConfig } from "../../config/index.js";

/** The configuration module alone: defaults, validation, flags over variables. */
const KEYS = "ops:admin:admin-secret-0123456789,alice:approve:alice-secret-0123456789";

function failure(env: Record<string, string>, flags: Record<string, string> = {}): ConfigError {
  try {
    loadConfig(env, new Map(Object.entries(flags)));
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("loaded without error");
}

describe("loadConfig", () => {
  it("gives the documented defaults for an empty environment", () => {
    const config = loadConfig({});
    expect(config.worker).toEqual({
      concurrency: 16,
      taskConcurrency: 64,
      fireConcurrency: 64,
      metrics: undefined,
    });
    expect(config.api).toMatchObject({ port: 8080, host: "127.0.0.1", keys: [], processes: 1 });
    expect(config.runtime).toMatchObject({
      prefix: "stepwise",
      leaseMs: 10_000,
      lockDurationMs: 3_000,
      stalledIntervalMs: 1_000,
      timerPollMs: 20,
      retentionSeconds: 90 * 86_400,
      maxHistoryEvents: 25_000,
      approvalEvents: false,
      otlp: false,
    });
    expect(config.log.level).toBe("info");
    expect(config.deployment).toEqual({
      region: "us-east-1",
      account: "123456789012",
      storage: "compact",
    });
  });

  it("gives approve keys their groups (STEPWISE_APPROVER_GROUPS)", () => {
    const config = loadConfig({
      STEPWISE_API_KEYS: KEYS,
      STEPWISE_APPROVER_GROUPS: "alice=finance|legal",
    });
    const alice = config.api.keys.find((k) => k.name === "alice");
    expect(alice?.groups).toEqual(["finance", "legal"]);
    expect(config.api.host).toBe("0.0.0.0");
  });

  it.each([
    [
      { STEPWISE_APPROVER_GROUPS: "alice:finance" },
      /STEPWISE_APPROVER_GROUPS entry 'alice:finance'/,
    ],
    [
      { STEPWISE_APPROVER_GROUPS: "mallory=finance" },
      /STEPWISE_APPROVER_GROUPS names key 'mallory'/,
    ],
    [
      { STEPWISE_LOCK_MS: "abc" },
      /^STEPWISE_LOCK_MS='abc': expected a whole number of at least 1$/,
    ],
    [{ STEPWISE_AWS_REGION: "EU_WEST" }, /^STEPWISE_AWS_REGION='EU_WEST': expected a region name/],
    [{ STEPWISE_AWS_ACCOUNT: "12" }, /^STEPWISE_AWS_ACCOUNT='12': expected 12 digits$/],
    [
      { STEPWISE_CONCURRENCY: "0" },
      /^--concurrency\/STEPWISE_CONCURRENCY='0': expected a whole number from 1 to 10000$/,
    ],
    [{ STEPWISE_TASK_CONCURRENCY: "many" }, /STEPWISE_TASK_CONCURRENCY='many'/],
    [{ STEPWISE_STORAGE: "xml" }, /^STEPWISE_STORAGE='xml': expected one of compact, json$/],
    [{ STEPWISE_LOG_LEVEL: "loud" }, /^STEPWISE_LOG_LEVEL='loud': expected one of fatal, error/],
    [{ LOG_LEVEL: "loud" }, /^LOG_LEVEL='loud'/],
    [{ STEPWISE_MAX_CONNECTIONS: "-1" }, /STEPWISE_MAX_CONNECTIONS/],
    [{ STEPWISE_START_RATE: "fast" }, /STEPWISE_START_RATE/],
    [{ STEPWISE_EGRESS_ALLOW: "10.0.0.0/99" }, /STEPWISE_EGRESS_ALLOW/],
    [{ STEPWISE_SHARDS: "0" }, /STEPWISE_SHARDS/],
    // A ':' reached the key builder and ended `serve` with an internal error.
    [{ STEPWISE_PREFIX: "team:a" }, /^STEPWISE_PREFIX='team:a': expected 1–100 letters/],
    [{ STEPWISE_PAYLOAD_STORE: "s3" }, /^STEPWISE_PAYLOAD_STORE='s3': expected one of redis, off$/],
    [
      { STEPWISE_APPROVAL_WEBHOOK: "ftp://x" },
      /^STEPWISE_APPROVAL_WEBHOOK='ftp:\/\/x': expected an http\(s\) URL$/,
    ],
    [{ STEPWISE_APPROVAL_WEBHOOK: "https://hooks.example" }, /needs STEPWISE_WEBHOOK_SECRET/],
    [
      { STEPWISE_MODEL_ENDPOINTS: "/nonexistent/models.yaml" },
      /STEPWISE_MODEL_ENDPOINTS: cannot read/,
    ],
    [{ STEPWISE_CRASH_AT: "sometime" }, /STEPWISE_CRASH_AT='sometime'/],
    [
      { STEPWISE_AUDIT_KEY: "/nonexistent/audit.pem" },
      /STEPWISE_AUDIT_KEY=\/nonexistent\/audit.pem\) cannot be read/,
    ],
    [{ PORT: "80a" }, /^--port\/PORT='80a'/],
  ])("refuses %j, naming the variable", (env, message) => {
    const err = failure({ STEPWISE_API_KEYS: KEYS, ...env });
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain("\n");
  });

  it("lets a flag override its variable, and names the flag when its value is bad", () => {
    const flags = new Map([
      ["concurrency", "3"],
      ["task-concurrency", "5"],
      ["fire-concurrency", "7"],
    ]);
    const config = loadConfig({ STEPWISE_CONCURRENCY: "9" }, flags);
    expect(config.worker).toMatchObject({ concurrency: 3, taskConcurrency: 5, fireConcurrency: 7 });
    expect(failure({}, { port: "x" }).message).toMatch(/^--port\/PORT='x'/);
  });

  it("fire concurrency follows concurrency, at least 64", () => {
    expect(loadConfig({ STEPWISE_CONCURRENCY: "100" }).worker.fireConcurrency).toBe(100);
    expect(loadConfig({ STEPWISE_CONCURRENCY: "8" }).worker.fireConcurrency).toBe(64);
  });

  it("reads STEPWISE_LOG_LEVEL before LOG_LEVEL", () => {
    expect(loadConfig({ LOG_LEVEL: "warn" }).log.level).toBe("warn");
    expect(loadConfig({ LOG_LEVEL: "warn", STEPWISE_LOG_LEVEL: "debug" }).log.level).toBe("debug");
  });

  it("turns retention 0 into keep-forever and a history cap of 0 into none", () => {
    const config = loadConfig({ STEPWISE_RETENTION_DAYS: "0", STEPWISE_MAX_HISTORY_EVENTS: "0" });
    expect(config.runtime.retentionSeconds).toBe(0);
    expect(config.runtime.maxHistoryEvents).toBe(Infinity);
  });
});

describe("loadClientConfig", () => {
  it("takes --url over STEPWISE_URL, and NO_COLOR of any non-empty value", () => {
    const config = loadClientConfig(
      { STEPWISE_URL: "http://a:1", STEPWISE_API_KEY: "k", NO_COLOR: "1" },
      new Map([["url", "http://b:2"]]),
    );
    expect(config).toEqual({ url: "http://b:2", apiKey: "k", color: false });
  });
});
