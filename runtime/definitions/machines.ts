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
import { isValidName } from "../store/ids.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";
import type { ModelBudget } from "../../task-runners/model/budget.js";
import { readBudget } from "../commit/usage.js";
import { MACHINE_FIELDS as M, VERSION_FIELDS as V, storedFields } from "../store/fields.js";
import {
  existingMachine,
  insertMachine,
  mismatch,
  newVersionFields,
  type CreatedStateMachine,
  type CreateStateMachineOptions,
} from "./machine-create.js";

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

  /**
   * Creates the state machine (version 1, or the next number of a name used before);
   * StateMachineAlreadyExists when one of this name exists, identical or not (REST's
   * POST: a new version is an update). machine-create.ts has the rule.
   */
  async create(
    name: string,
    definition: StateMachineDefinition,
    options: StateMachineOptions = {},
  ): Promise<StateMachineSummary> {
    checkName(name);
    const def = validated(definition);
    const inserted = await insertMachine(
      this.client,
      this.keys,
      name,
      def,
      definitionHashOf(def),
      options,
    );
    if (!inserted) throw alreadyExists(name);
    const {
      created: _created,
      machineCreatedAt: _at,
      published: _published,
      ...summary
    } = inserted;
    return summary;
  }

  /**
   * AWS's CreateStateMachine: creates the machine with its tags and, with `publish`,
   * publishes its version, at once. A machine of this name that is what the create
   * asks for (machine-create.ts `mismatch`) is answered as it is (`created: false`),
   * nothing applied again; another is StateMachineAlreadyExists.
   */
  async createIdempotent(
    name: string,
    definition: StateMachineDefinition,
    options: CreateStateMachineOptions = {},
  ): Promise<CreatedStateMachine> {
    checkName(name);
    const def = validated(definition);
    const hash = definitionHashOf(def);
    // A machine deleted between the create finding it and reading it: create again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const inserted = await insertMachine(this.client, this.keys, name, def, hash, options);
      if (inserted) return inserted;
      const existing = await existingMachine(this.client, this.keys, name);
      if (!existing) continue;
      const why = mismatch(existing, hash, options);
      if (why !== undefined) throw alreadyExists(name, why);
      const answer: CreatedStateMachine = {
        ...existing.latest,
        created: false,
        machineCreatedAt: existing.machineCreatedAt,
      };
      if (options.publish && existing.published) answer.published = existing.published;
      return answer;
    }
    throw new Error(`creating state machine '${name}' kept racing its deletion`);
  }

  /** Type, role and creation time of a state machine (StateMachineDoesNotExist if none). */
  async meta(name: string): Promise<MachineMeta> {
    const [latest, ty, role, createdAt, budget] = await this.client.redis.hmget(
      this.keys.machine(name),
      ...storedFields(M, ["latest", "type", "roleArn", "createdAt", "budget"]),
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
      .hdel(
        this.keys.machine(name),
        ...storedFields(M, ["latest", "createdAt", "type", "roleArn", "firstVersion", "budget"]),
      )
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
    options: Pick<StateMachineOptions, "roleArn" | "budget" | "caller" | "definitionText"> = {},
  ): Promise<StateMachineSummary & { created: boolean }> {
    checkName(name);
    const def = definition === undefined ? undefined : validated(definition);
    const latest = Number((await this.client.redis.hget(this.keys.machine(name), M.latest)) ?? 0);
    if (latest < 1) {
      throw new RuntimeError("StateMachineDoesNotExist", `State machine '${name}' does not exist`);
    }
    if (options.roleArn !== undefined)
      await this.client.redis.hset(this.keys.machine(name), M.roleArn, options.roleArn);
    // Executions started from now on get it; running ones keep the budget they started with.
    if (options.budget !== undefined)
      await this.client.redis.hset(
        this.keys.machine(name),
        M.budget,
        JSON.stringify(options.budget),
      );
    if (def === undefined) {
      const { definition: _definition, ...summary } = await this.version(name, latest);
      return { ...summary, created: false };
    }
    const [hash, createdAt] = await this.client.redis.hmget(
      this.keys.machineVersion(name, latest),
      ...storedFields(V, ["definitionHash", "createdAt"]),
    );
    if (hash === definitionHashOf(def) && typeof createdAt === "string") {
      return { name, version: latest, definitionHash: hash, createdAt, created: false };
    }
    const added = await this.addVersion(
      name,
      def,
      new Date().toISOString(),
      options.caller?.name,
      options.definitionText,
    );
    return { ...added, created: true };
  }

  private async addVersion(
    name: string,
    definition: StateMachineDefinition,
    createdAt: string,
    createdBy = "",
    definitionText?: string,
  ): Promise<StateMachineSummary> {
    const definitionHash = definitionHashOf(definition);
    const version = await this.client.redis.hincrby(this.keys.machine(name), M.nextVersion, 1);
    const fields = await newVersionFields(
      this.client,
      this.keys,
      name,
      version,
      definition,
      { definitionHash, createdAt, createdBy },
      definitionText,
    );
    await this.client.redis
      .multi()
      .hset(this.keys.machineVersion(name, version), fields)
      .hset(this.keys.machine(name), M.latest, version)
      .hsetnx(this.keys.machine(name), M.createdAt, createdAt)
      .hsetnx(this.keys.machine(name), M.firstVersion, version)
      .zadd(this.keys.machines, 0, name)
      .exec();
    return { name, version, definitionHash, createdAt };
  }

  /** The latest version number (for starting executions). */
  async latest(name: string): Promise<number> {
    const latest = Number((await this.client.redis.hget(this.keys.machine(name), M.latest)) ?? 0);
    if (!isValidName(name) || latest < 1) throw machineNotFound(name);
    return latest;
  }

  async version(name: string, version: number): Promise<StateMachineVersion> {
    const [hash, createdAt, def, text] = await this.client.redis.hmget(
      this.keys.machineVersion(name, version),
      ...storedFields(V, ["definitionHash", "createdAt", "definition", "definitionText"]),
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
      ...(text ? { definitionText: text } : {}),
    };
  }

  async get(name: string, version?: number): Promise<StateMachineDetail> {
    const meta = await this.meta(name);
    const latest = meta.latest;
    const chosen = await this.version(name, version ?? latest);
    const pipeline = this.client.redis.pipeline();
    // Versions of an earlier machine of the same name (deleted) are not this one's.
    const first = Number(
      (await this.client.redis.hget(this.keys.machine(name), M.firstVersion)) ?? 1,
    );
    for (let v = first; v <= latest; v++) {
      pipeline.hmget(
        this.keys.machineVersion(name, v),
        ...storedFields(V, ["definitionHash", "createdAt"]),
      );
    }
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

/** A definition's hash: SHA-256 of its canonical JSON (key order and spacing do not count). */
export function definitionHashOf(definition: StateMachineDefinition): string {
  return sha256(canonicalJson(definition as unknown as Json));
}

/** The name is taken; `why`: how the existing machine differs from what a create asks for. */
function alreadyExists(name: string, why?: string): RuntimeError {
  return new RuntimeError(
    "StateMachineAlreadyExists",
    why === undefined
      ? `State machine '${name}' already exists`
      : `State machine '${name}' already exists (${why})`,
  );
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
