import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { validateDefinition } from "../../schema/index.js";
import { canonicalJson, decodeCursor, encodeCursor, sha256 } from "../store/canonical.js";
import {
  RuntimeError,
  type Page,
  type StateMachineDetail,
  type StateMachineOptions,
  type StateMachineSummary,
  type StateMachineType,
  type StateMachineVersion,
} from "../contract/index.js";
import { versionHash } from "../audit/versions.js";
import { isValidName } from "../store/ids.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";
import type { ModelBudget } from "../../task-runners/model/budget.js";
import { BUDGET_FIELD, readBudget } from "../commit/usage.js";

/**
 * State machines: each version is stored once with its content hash and never
 * changes; an update adds a version (executions stay pinned to theirs).
 */
/** What a state machine is besides its versions. */
interface MachineMeta {
  type: StateMachineType;
  roleArn?: string;
  createdAt: string;
  latest: number;
  budget?: ModelBudget;
}

export class MachineStore {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
  ) {}

  async create(
    name: string,
    definition: StateMachineDefinition,
    options: StateMachineOptions = {},
  ): Promise<StateMachineSummary> {
    checkName(name);
    const def = validated(definition);
    const createdAt = new Date().toISOString();
    // HSETNX claims the name atomically: two concurrent creates cannot both win.
    const claimed = await this.client.redis.hsetnx(this.keys.machine(name), "latest", "0");
    if (claimed === 0)
      throw new RuntimeError("StateMachineAlreadyExists", `State machine '${name}' already exists`);
    const fields: Record<string, string> = { ty: options.type ?? "STANDARD" };
    if (options.roleArn !== undefined) fields.role = options.roleArn;
    if (options.budget !== undefined) fields[BUDGET_FIELD] = JSON.stringify(options.budget);
    await this.client.redis.hset(this.keys.machine(name), fields);
    return this.addVersion(name, def, createdAt, options.caller?.name);
  }

  /** Type, role and creation time of a state machine (StateMachineDoesNotExist if none). */
  async meta(name: string): Promise<MachineMeta> {
    const [latest, ty, role, createdAt, budget] = await this.client.redis.hmget(
      this.keys.machine(name),
      "latest",
      "ty",
      "role",
      "createdAt",
      BUDGET_FIELD,
    );
    if (!isValidName(name) || Number(latest ?? 0) < 1) throw machineNotFound(name);
    const meta: MachineMeta = {
      type: ty === "EXPRESS" ? "EXPRESS" : "STANDARD",
      createdAt: createdAt ?? "",
      latest: Number(latest),
    };
    if (role) meta.roleArn = role;
    const parsed = readBudget(budget);
    if (parsed) meta.budget = parsed;
    return meta;
  }

  /**
   * Deletes what names the machine. The `next` version counter and the versions'
   * definitions stay: running executions still read theirs, and a machine created
   * later under this name goes on numbering instead of overwriting them.
   */
  async delete(name: string): Promise<void> {
    await this.meta(name);
    await this.client.redis
      .multi()
      .hdel(this.keys.machine(name), "latest", "createdAt", "ty", "role", "first", BUDGET_FIELD)
      .zrem(this.keys.machines, name)
      .del(this.keys.publishedVersions(name), this.keys.aliases(name), this.keys.tags(`sm:${name}`))
      .exec();
  }

  /**
   * A new version, unless the definition equals the latest version's: then that
   * version (`created: false`), so a deploy that re-sends an unchanged definition
   * does not pile up versions. (Two concurrent updates may still both add one.)
   */
  async update(
    name: string,
    definition: StateMachineDefinition | undefined,
    options: Pick<StateMachineOptions, "roleArn" | "budget" | "caller"> = {},
  ): Promise<StateMachineSummary & { created: boolean }> {
    checkName(name);
    const def = definition === undefined ? undefined : validated(definition);
    const latest = Number((await this.client.redis.hget(this.keys.machine(name), "latest")) ?? 0);
    if (latest < 1) {
      throw new RuntimeError("StateMachineDoesNotExist", `State machine '${name}' does not exist`);
    }
    if (options.roleArn !== undefined)
      await this.client.redis.hset(this.keys.machine(name), "role", options.roleArn);
    // Executions started from now on get it; running ones keep the budget they started with.
    if (options.budget !== undefined)
      await this.client.redis.hset(
        this.keys.machine(name),
        BUDGET_FIELD,
        JSON.stringify(options.budget),
      );
    if (def === undefined) {
      const { definition: _definition, ...summary } = await this.version(name, latest);
      return { ...summary, created: false };
    }
    const [hash, createdAt] = await this.client.redis.hmget(
      this.keys.machineVersion(name, latest),
      "hash",
      "createdAt",
    );
    if (hash === sha256(canonicalJson(def as unknown as Json)) && typeof createdAt === "string") {
      return { name, version: latest, definitionHash: hash, createdAt, created: false };
    }
    const added = await this.addVersion(name, def, new Date().toISOString(), options.caller?.name);
    return { ...added, created: true };
  }

  private async addVersion(
    name: string,
    definition: StateMachineDefinition,
    createdAt: string,
    createdBy = "",
  ): Promise<StateMachineSummary> {
    const text = canonicalJson(definition as unknown as Json);
    const definitionHash = sha256(text);
    const version = await this.client.redis.hincrby(this.keys.machine(name), "next", 1);
    // The version chain (audit/versions.ts). Two concurrent updates may read the
    // previous version before it is written: that version's link then starts anew ('').
    const previous =
      version > 1
        ? ((await this.client.redis.hget(this.keys.machineVersion(name, version - 1), "vh")) ?? "")
        : "";
    const link = { name, version, definitionHash, createdAt, createdBy, previous };
    await this.client.redis
      .multi()
      .hset(this.keys.machineVersion(name, version), {
        hash: definitionHash,
        createdAt,
        def: JSON.stringify(definition),
        by: createdBy,
        pvh: previous,
        vh: versionHash(link),
      })
      .hset(this.keys.machine(name), "latest", version)
      .hsetnx(this.keys.machine(name), "createdAt", createdAt)
      .hsetnx(this.keys.machine(name), "first", version)
      .zadd(this.keys.machines, 0, name)
      .exec();
    return { name, version, definitionHash, createdAt };
  }

  /** The latest version number (for starting executions). */
  async latest(name: string): Promise<number> {
    const latest = Number((await this.client.redis.hget(this.keys.machine(name), "latest")) ?? 0);
    if (!isValidName(name) || latest < 1) throw machineNotFound(name);
    return latest;
  }

  async version(name: string, version: number): Promise<StateMachineVersion> {
    const [hash, createdAt, def] = await this.client.redis.hmget(
      this.keys.machineVersion(name, version),
      "hash",
      "createdAt",
      "def",
    );
    if (!hash || !createdAt || !def) {
      throw new RuntimeError(
        "StateMachineVersionDoesNotExist",
        `State machine '${name}' has no version ${version}`,
      );
    }
    return {
      name,
      version,
      definitionHash: hash,
      createdAt,
      definition: JSON.parse(def) as StateMachineDefinition,
    };
  }

  async get(name: string, version?: number): Promise<StateMachineDetail> {
    const meta = await this.meta(name);
    const latest = meta.latest;
    const chosen = await this.version(name, version ?? latest);
    const pipeline = this.client.redis.pipeline();
    // Versions of an earlier machine of the same name (deleted) are not this one's.
    const first = Number((await this.client.redis.hget(this.keys.machine(name), "first")) ?? 1);
    for (let v = first; v <= latest; v++)
      pipeline.hmget(this.keys.machineVersion(name, v), "hash", "createdAt");
    const rows = (await pipeline.exec()) ?? [];
    const versions: StateMachineSummary[] = [];
    rows.forEach(([, row], i) => {
      const [hash, createdAt] = row as [string | null, string | null];
      if (hash && createdAt)
        versions.push({ name, version: first + i, definitionHash: hash, createdAt });
    });
    const detail: StateMachineDetail = {
      ...chosen,
      versions,
      latestVersion: latest,
      type: meta.type,
      machineCreatedAt: meta.createdAt,
    };
    if (meta.roleArn !== undefined) detail.roleArn = meta.roleArn;
    if (meta.budget !== undefined) detail.budget = meta.budget;
    return detail;
  }

  async list(
    options: { cursor?: string; limit?: number } = {},
  ): Promise<Page<StateMachineSummary>> {
    const limit = Math.max(1, Math.min(options.limit ?? 100, 1000));
    let after = "-";
    if (options.cursor !== undefined) {
      const c = decodeCursor(options.cursor);
      if (!c || typeof c.after !== "string")
        throw new RuntimeError("InvalidCursor", "The cursor is not valid");
      after = `(${c.after}`;
    }
    const names = await this.client.redis.zrangebylex(
      this.keys.machines,
      after,
      "+",
      "LIMIT",
      0,
      limit + 1,
    );
    const page = names.slice(0, limit);
    const items: StateMachineSummary[] = [];
    for (const name of page) {
      const latest = await this.latest(name);
      const { definition: _definition, ...summary } = await this.version(name, latest);
      items.push(summary);
    }
    const result: Page<StateMachineSummary> = { items };
    if (names.length > limit) result.nextCursor = encodeCursor({ after: page[page.length - 1]! });
    return result;
  }
}

function machineNotFound(name: string): RuntimeError {
  return new RuntimeError("StateMachineDoesNotExist", `State machine '${name}' does not exist`);
}

function checkName(name: string): void {
  if (!isValidName(name)) {
    // The API checks names against the same pattern first; this guards direct callers.
    throw new TypeError(
      `'${name}' is not a valid state machine name (letters, digits, _ . -, 1–80)`,
    );
  }
}

/** The runtime refuses what the validator refuses, whoever calls it. */
function validated(definition: StateMachineDefinition): StateMachineDefinition {
  const result = validateDefinition(definition);
  if (!result.valid || !result.definition) {
    const errors = result.diagnostics.filter((d) => d.severity === "error");
    const first = errors[0];
    throw new RuntimeError(
      "InvalidDefinition",
      first ? `${first.message} (${first.path || "/"})` : "The definition is not valid",
      result.diagnostics as unknown as Json[],
    );
  }
  return result.definition;
}
