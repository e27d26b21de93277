import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type {
  Activity,
  AliasRoute,
  CreatedStateMachine,
  CreateStateMachineOptions,
  Page,
  PublishedVersion,
  Runtime,
  StateMachineAlias,
  StateMachineDetail,
  StateMachineOptions,
  StateMachineSummary,
  TaggedResource,
} from "../contract/index.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";
import { ActivityStore } from "./activities.js";
import { AliasStore } from "./aliases.js";
import { MachineStore } from "./machines.js";
import { RecentMeta } from "./recent-meta.js";
import { TagStore } from "./tags.js";
import { VersionStore } from "./versions.js";

/** The `Runtime` methods about definitions rather than executions. */
type DefinitionCalls =
  | "createStateMachine"
  | "createStateMachineIdempotent"
  | "updateStateMachine"
  | "deleteStateMachine"
  | "getStateMachine"
  | "listStateMachines"
  | "publishStateMachineVersion"
  | "listStateMachineVersions"
  | "getPublishedVersion"
  | "deleteStateMachineVersion"
  | "createStateMachineAlias"
  | "getStateMachineAlias"
  | "updateStateMachineAlias"
  | "deleteStateMachineAlias"
  | "listStateMachineAliases"
  | "tagResource"
  | "untagResource"
  | "listTags"
  | "createActivity"
  | "describeActivity"
  | "listActivities"
  | "deleteActivity";

/**
 * The definitions half of the runtime (runtime/runtime.ts `RedisRuntime` extends
 * it): state machines, their versions and aliases, tags and activities, each
 * method a call on its store in this folder. The stores are kept for the
 * execution half: starts read machines and aliases.
 */
export class DefinitionsFacade implements Pick<Runtime, DefinitionCalls> {
  protected readonly machines: MachineStore;
  protected readonly versions: VersionStore;
  protected readonly aliases: AliasStore;
  protected readonly tags: TagStore;
  protected readonly activities: ActivityStore;
  /** Machine types for EXPRESS starts; this process's own changes drop an entry at once. */
  protected readonly recentMeta: RecentMeta;

  constructor(client: RedisClient, keys: Keys) {
    this.machines = new MachineStore(client, keys);
    this.versions = new VersionStore(client, keys, this.machines);
    this.aliases = new AliasStore(client, keys, this.machines, this.versions);
    this.tags = new TagStore(client, keys);
    this.activities = new ActivityStore(client, keys);
    this.recentMeta = new RecentMeta(this.machines);
  }

  /**
   * Settled once the deployment's shard count is resolved. A fresh deployment stores
   * its count before anything else (shards/shards.ts `resolveShardCount`): a machine
   * written first would make it look like a deployment from before shards, of one shard.
   */
  protected deploymentOpened(): Promise<unknown> {
    return Promise.resolve();
  }

  async createStateMachine(
    name: string,
    definition: StateMachineDefinition,
    options?: StateMachineOptions,
  ): Promise<StateMachineSummary> {
    await this.deploymentOpened();
    this.recentMeta.forget(name);
    return this.machines.create(name, definition, options);
  }

  async createStateMachineIdempotent(
    name: string,
    definition: StateMachineDefinition,
    options?: CreateStateMachineOptions,
  ): Promise<CreatedStateMachine> {
    await this.deploymentOpened();
    this.recentMeta.forget(name);
    return this.machines.createIdempotent(name, definition, options);
  }

  updateStateMachine(
    name: string,
    definition: StateMachineDefinition | undefined,
    options?: Pick<StateMachineOptions, "roleArn" | "budget" | "caller" | "definitionText">,
  ): Promise<StateMachineSummary & { created: boolean }> {
    // Dropped again once done: a start in between may have read the meta before the update.
    this.recentMeta.forget(name);
    return this.machines
      .update(name, definition, options)
      .finally(() => this.recentMeta.forget(name));
  }

  deleteStateMachine(name: string): Promise<void> {
    this.recentMeta.forget(name);
    return this.machines.delete(name).finally(() => this.recentMeta.forget(name));
  }

  getStateMachine(name: string, version?: number): Promise<StateMachineDetail> {
    return this.machines.get(name, version);
  }

  listStateMachines(options?: Paging): Promise<Page<StateMachineSummary>> {
    return this.machines.list(options);
  }

  publishStateMachineVersion(
    name: string,
    options: { description?: string; expectedVersion?: number } = {},
  ): Promise<PublishedVersion & { created: boolean }> {
    return this.versions.publish(name, options);
  }

  listStateMachineVersions(name: string, options: Paging = {}): Promise<Page<PublishedVersion>> {
    return this.versions.list(name, options);
  }

  getPublishedVersion(name: string, version: number): Promise<PublishedVersion> {
    return this.versions.get(name, version);
  }

  async deleteStateMachineVersion(name: string, version: number): Promise<void> {
    const routedBy = await this.aliases.routingTo(name, version);
    return this.versions.delete(name, version, routedBy);
  }

  createStateMachineAlias(
    name: string,
    alias: string,
    options: { description?: string; routing: AliasRoute[] },
  ): Promise<StateMachineAlias & { created: boolean }> {
    return this.aliases.create(name, alias, options);
  }

  getStateMachineAlias(name: string, alias: string): Promise<StateMachineAlias> {
    return this.aliases.get(name, alias);
  }

  updateStateMachineAlias(
    name: string,
    alias: string,
    options: { description?: string; routing?: AliasRoute[] },
  ): Promise<StateMachineAlias> {
    return this.aliases.update(name, alias, options);
  }

  deleteStateMachineAlias(name: string, alias: string): Promise<void> {
    return this.aliases.delete(name, alias);
  }

  listStateMachineAliases(name: string, options: Paging = {}): Promise<Page<StateMachineAlias>> {
    return this.aliases.list(name, options);
  }

  async tagResource(resource: TaggedResource, tags: Record<string, string>): Promise<void> {
    await this.checkTagged(resource);
    return this.tags.tag(resource, tags);
  }

  async untagResource(resource: TaggedResource, keys: string[]): Promise<void> {
    await this.checkTagged(resource);
    return this.tags.untag(resource, keys);
  }

  async listTags(resource: TaggedResource): Promise<Record<string, string>> {
    await this.checkTagged(resource);
    return this.tags.list(resource);
  }

  /** What a tag call names must exist (StateMachineDoesNotExist, ActivityDoesNotExist). */
  private async checkTagged(resource: TaggedResource): Promise<void> {
    if (resource.kind === "stateMachine") await this.machines.latest(resource.name);
    else await this.activities.describe(resource.name);
  }

  createActivity(name: string): Promise<Activity & { created: boolean }> {
    return this.activities.create(name);
  }

  describeActivity(name: string): Promise<Activity> {
    return this.activities.describe(name);
  }

  listActivities(options: Paging = {}): Promise<Page<Activity>> {
    return this.activities.list(options);
  }

  deleteActivity(name: string): Promise<void> {
    return this.activities.delete(name);
  }
}

/** A page request of a listing. */
type Paging = { cursor?: string; limit?: number };
