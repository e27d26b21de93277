import type { Redis } from "ioredis";
import { TriggerError } from "../errors.js";
import { ruleDefinition, type RuleDefinition, type RuleInput } from "./rule-record.js";
import type { Starter } from "../schedules/schedule-store.js";
import type { TriggerKeys } from "../trigger-keys.js";

/** Rules: one hash, rule name → definition (JSON); a delivery reads it whole, in one call. */
export class RuleStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: TriggerKeys,
    private readonly runtime: Pick<Starter, "getStateMachine">,
  ) {}

  async create(name: string, input: RuleInput): Promise<RuleDefinition> {
    const definition = ruleDefinition(name, input, Date.now());
    await this.checkTarget(definition);
    const created = await this.redis.hsetnx(this.keys.rules, name, JSON.stringify(definition));
    if (created === 0) throw new TriggerError("RuleAlreadyExists", `Rule '${name}' already exists`);
    return definition;
  }

  async update(name: string, input: RuleInput): Promise<RuleDefinition> {
    const current = await this.get(name);
    const definition = ruleDefinition(name, input, Date.now(), current.createdAt);
    await this.checkTarget(definition);
    // HSET on an existing field only: a rule deleted meanwhile stays deleted.
    const done = await this.redis.eval(
      `if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return 0 end
       redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) return 1`,
      1,
      this.keys.rules,
      name,
      JSON.stringify(definition),
    );
    if (done === 0) throw notFound(name);
    return definition;
  }

  async get(name: string): Promise<RuleDefinition> {
    const text = await this.redis.hget(this.keys.rules, name);
    if (!text) throw notFound(name);
    return JSON.parse(text) as RuleDefinition;
  }

  async list(): Promise<RuleDefinition[]> {
    const all = await this.redis.hgetall(this.keys.rules);
    return Object.keys(all)
      .sort()
      .map((name) => JSON.parse(all[name]!) as RuleDefinition);
  }

  async delete(name: string): Promise<void> {
    if ((await this.redis.hdel(this.keys.rules, name)) === 0) throw notFound(name);
  }

  private async checkTarget(definition: RuleDefinition): Promise<void> {
    try {
      await this.runtime.getStateMachine(definition.target.stateMachine);
    } catch (err) {
      if ((err as { code?: string }).code === "StateMachineDoesNotExist")
        throw new TriggerError(
          "InvalidRequest",
          `state machine '${definition.target.stateMachine}' does not exist`,
          "/target/stateMachine",
        );
      throw err;
    }
  }
}

function notFound(name: string): TriggerError {
  return new TriggerError("RuleDoesNotExist", `Rule '${name}' does not exist`);
}
