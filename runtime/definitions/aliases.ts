import { decodeCursor, encodeCursor } from "../store/canonical.js";
import {
  RuntimeError,
  type AliasRoute,
  type Page,
  type StateMachineAlias,
} from "../contract/index.js";
import type { Keys } from "../store/keys.js";
import type { MachineStore } from "./machines.js";
import type { RedisClient } from "../store/redis.js";
import type { VersionStore } from "./versions.js";

/**
 * Aliases (AWS CreateStateMachineAlias): a name that routes starts to one or two
 * published versions by weight. A machine's aliases are one hash (alias → JSON):
 * few per machine (AWS allows 100), read whole.
 */

/** AWS's alias names: like a machine name, but never all digits (that is a version). */
const ALIAS_NAME = /^(?=.*[A-Za-z_.-])[A-Za-z0-9_.-]{1,80}$/;

export function isValidAliasName(name: string): boolean {
  return ALIAS_NAME.test(name);
}

interface StoredAlias {
  description?: string;
  routing: AliasRoute[];
  createdAt: string;
  updatedAt: string;
}

export class AliasStore {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
    private readonly machines: MachineStore,
    private readonly versions: VersionStore,
  ) {}

  async create(
    machine: string,
    alias: string,
    options: { description?: string; routing: AliasRoute[] },
  ): Promise<StateMachineAlias & { created: boolean }> {
    await this.checkRouting(machine, options.routing);
    if (!isValidAliasName(alias)) {
      throw new TypeError(`'${alias}' is not a valid alias name`);
    }
    const now = new Date().toISOString();
    const stored: StoredAlias = { routing: options.routing, createdAt: now, updatedAt: now };
    if (options.description !== undefined) stored.description = options.description;
    const set = await this.client.redis.hsetnx(
      this.keys.aliases(machine),
      alias,
      JSON.stringify(stored),
    );
    if (set === 1) return { ...toAlias(machine, alias, stored), created: true };
    const existing = await this.get(machine, alias);
    // AWS: creating an alias again with the same settings answers the alias.
    if (
      sameRouting(existing.routing, options.routing) &&
      existing.description === options.description
    ) {
      return { ...existing, created: false };
    }
    throw new RuntimeError(
      "StateMachineAliasAlreadyExists",
      `Alias '${alias}' of '${machine}' already exists with other settings`,
    );
  }

  async get(machine: string, alias: string): Promise<StateMachineAlias> {
    await this.machines.latest(machine);
    const text = await this.client.redis.hget(this.keys.aliases(machine), alias);
    if (text === null) throw notFound(machine, alias);
    return toAlias(machine, alias, JSON.parse(text) as StoredAlias);
  }

  async update(
    machine: string,
    alias: string,
    options: { description?: string; routing?: AliasRoute[] },
  ): Promise<StateMachineAlias> {
    const existing = await this.get(machine, alias);
    if (options.routing !== undefined) await this.checkRouting(machine, options.routing);
    const stored: StoredAlias = {
      routing: options.routing ?? existing.routing,
      createdAt: existing.createdAt,
      updatedAt: new Date().toISOString(),
    };
    const description = options.description ?? existing.description;
    if (description !== undefined) stored.description = description;
    await this.client.redis.hset(this.keys.aliases(machine), alias, JSON.stringify(stored));
    return toAlias(machine, alias, stored);
  }

  async delete(machine: string, alias: string): Promise<void> {
    await this.machines.latest(machine);
    const removed = await this.client.redis.hdel(this.keys.aliases(machine), alias);
    if (removed === 0) throw notFound(machine, alias);
  }

  /** In name order. */
  async list(
    machine: string,
    options: { cursor?: string; limit?: number },
  ): Promise<Page<StateMachineAlias>> {
    await this.machines.latest(machine);
    const limit = Math.max(1, Math.min(options.limit ?? 100, 1000));
    let after = "";
    if (options.cursor !== undefined) {
      const c = decodeCursor(options.cursor);
      if (!c || typeof c.after !== "string")
        throw new RuntimeError("InvalidCursor", "The cursor is not valid");
      after = c.after;
    }
    const all = await this.client.redis.hgetall(this.keys.aliases(machine));
    const names = Object.keys(all)
      .filter((n) => n > after)
      .sort();
    const page = names.slice(0, limit);
    const items = page.map((n) => toAlias(machine, n, JSON.parse(all[n]!) as StoredAlias));
    const result: Page<StateMachineAlias> = { items };
    if (names.length > limit) result.nextCursor = encodeCursor({ after: page[page.length - 1]! });
    return result;
  }

  /** The aliases that route to a version (a routed version may not be deleted). */
  async routingTo(machine: string, version: number): Promise<string[]> {
    const all = await this.client.redis.hgetall(this.keys.aliases(machine));
    return Object.entries(all)
      .filter(([, text]) =>
        (JSON.parse(text) as StoredAlias).routing.some((r) => r.version === version),
      )
      .map(([name]) => name)
      .sort();
  }

  /** The version a start through the alias runs: drawn by weight. */
  async pick(machine: string, alias: string, random: () => number): Promise<number> {
    const { routing } = await this.get(machine, alias);
    return pickRoute(routing, random);
  }

  /**
   * AWS's rules: one or two routes, distinct published versions of this machine,
   * integer weights of 0–100 that add up to 100.
   */
  private async checkRouting(machine: string, routing: AliasRoute[]): Promise<void> {
    const problem = routingProblem(routing);
    if (problem) throw new RuntimeError("InvalidRoutingConfiguration", problem);
    for (const route of routing) await this.versions.get(machine, route.version);
  }
}

export function routingProblem(routing: readonly AliasRoute[]): string | undefined {
  if (routing.length < 1 || routing.length > 2) return "an alias routes to one or two versions";
  if (routing.length === 2 && routing[0]!.version === routing[1]!.version)
    return "the two routes name the same version";
  for (const r of routing) {
    if (!Number.isInteger(r.weight) || r.weight < 0 || r.weight > 100)
      return `the weight ${r.weight} is not an integer from 0 to 100`;
  }
  const total = routing.reduce((sum, r) => sum + r.weight, 0);
  if (total !== 100) return `the weights add up to ${total}, not 100`;
  return undefined;
}

/** A route drawn with probability weight/100; `random` is uniform on [0, 1). */
export function pickRoute(routing: readonly AliasRoute[], random: () => number): number {
  let draw = random() * 100;
  for (const route of routing) {
    if (draw < route.weight) return route.version;
    draw -= route.weight;
  }
  return routing[routing.length - 1]!.version;
}

function sameRouting(a: readonly AliasRoute[], b: readonly AliasRoute[]): boolean {
  const key = (r: readonly AliasRoute[]) =>
    [...r]
      .sort((x, y) => x.version - y.version)
      .map((x) => `${x.version}:${x.weight}`)
      .join(",");
  return key(a) === key(b);
}

function toAlias(machine: string, name: string, stored: StoredAlias): StateMachineAlias {
  const alias: StateMachineAlias = {
    name,
    stateMachine: machine,
    routing: stored.routing,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
  };
  if (stored.description !== undefined) alias.description = stored.description;
  return alias;
}

function notFound(machine: string, alias: string): RuntimeError {
  return new RuntimeError(
    "StateMachineAliasDoesNotExist",
    `State machine '${machine}' has no alias '${alias}'`,
  );
}
