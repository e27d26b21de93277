import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { versionHash } from "../audit/versions.js";
import {
  RuntimeError,
  type PublishedVersion,
  type StateMachineOptions,
  type StateMachineSummary,
  type StateMachineType,
} from "../contract/index.js";
import {
  MACHINE_FIELDS as M,
  VERSION_FIELDS as V,
  storedFields,
  toStored,
} from "../store/fields.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";
import { MAX_TAGS } from "./tags.js";
import { canonicalJson } from "../store/canonical.js";
import { AWS_ACCOUNT } from "../store/ids.js";
import { defineScript } from "../store/lua/spec.js";

/**
 * Creating a state machine, one rule for both APIs (issue 42). The machine, its
 * first version, its tags and (with `publish`) that version's publication are
 * written by one Lua script, so a concurrent create, or a retry while the first
 * is in flight, sees either nothing or the whole machine.
 *
 * An existing machine of the name is the same machine when it is what the create
 * asks for: the same definition (canonical JSON, hashed once, in machines.ts) as
 * its latest version, the same type, the same role and budget when the create
 * names one, and, when the create publishes, its latest version published with
 * the same description. `createIdempotent` (AWS's CreateStateMachine) answers that
 * machine as it is, applying nothing again (tags, publication); anything else is
 * StateMachineAlreadyExists. `create` (REST's POST) refuses any existing machine.
 */

/** What a create sets besides the definition (AWS's CreateStateMachine in one call). */
export interface CreateStateMachineOptions extends StateMachineOptions {
  /** The new machine's tags; an existing machine answered keeps its own. */
  tags?: Record<string, string>;
  /** Publishes the version the create makes (AWS's `publish`). */
  publish?: boolean;
  /** The published version's description; only with `publish`. */
  versionDescription?: string;
}

/** What a create answers: the latest version, and whether the create made the machine. */
export interface CreatedStateMachine extends StateMachineSummary {
  /** false: an identical machine existed; it is answered as it is. */
  created: boolean;
  /** When the state machine was created (its first version). */
  machineCreatedAt: string;
  /** With `publish`: the published version (the one published then, for an existing machine). */
  published?: PublishedVersion;
}

/** The role a state machine created without one reports (AWS requires one): the deployment's account. */
export function defaultRoleArn(): string {
  return `arn:aws:iam::${AWS_ACCOUNT}:role/stepwise`;
}

/** What an existing machine is, as far as a create compares it. */
export interface ExistingMachine {
  type: StateMachineType;
  roleArn?: string;
  /** The stored budget's JSON text. */
  budget?: string;
  machineCreatedAt: string;
  /** The latest version. */
  latest: StateMachineSummary;
  /** The latest version's publication, if it is published. */
  published?: PublishedVersion;
}

/** Why the existing machine is not what the create asks for; undefined when it is. */
export function mismatch(
  existing: ExistingMachine,
  definitionHash: string,
  options: CreateStateMachineOptions,
): string | undefined {
  if (existing.latest.definitionHash !== definitionHash) return "another definition";
  const type = options.type ?? "STANDARD";
  if (existing.type !== type) return `type ${existing.type}`;
  if (options.roleArn !== undefined && options.roleArn !== (existing.roleArn ?? defaultRoleArn())) {
    return "another role";
  }
  if (
    options.budget !== undefined &&
    (existing.budget === undefined ||
      canonicalJson(JSON.parse(existing.budget) as Json) !==
        canonicalJson(options.budget as unknown as Json))
  ) {
    return "another budget";
  }
  if (options.publish) {
    if (!existing.published) return `version ${existing.latest.version} unpublished`;
    if (existing.published.description !== options.versionDescription) {
      return `version ${existing.latest.version} published with another description`;
    }
  }
  return undefined;
}

/** What the create script takes: every field already under its stored name (store/fields.ts). */
export interface CreateMachineArgs {
  name: string;
  /** The version counter the new version was numbered from ('' for none). */
  next: string;
  version: number;
  machine: Record<string, string>;
  /** Machine fields an earlier machine of this name may have left and this one has not. */
  unset: string[];
  versionFields: Record<string, string>;
  tags: Record<string, string>;
  publish: boolean;
}

export type CreateMachineReply = { kind: "created" } | { kind: "exists" } | { kind: "moved" };

/**
 * Writes a new machine, its version, tags and publication at once. `exists` when a
 * machine of the name exists; `moved` when the version counter is no longer the one
 * the version (and its link in the version chain) was computed from. A name whose
 * machine was deleted keeps its counter (machines.ts `delete`): the new machine goes
 * on numbering after it.
 */
export const createMachine = defineScript<CreateMachineArgs, CreateMachineReply>()({
  name: "createMachine",
  keys: ["machine", "version", "machines", "tags", "published"],
  replies: ["created", "exists", "moved"],
  lua: `
  local m = hmgetNamed(KEY.machine, MACHINE, {'latest', 'nextVersion'})
  if tonumber(m.latest or '0') >= 1 then return reply('exists') end
  if (m.nextVersion or '') ~= ARG.next then return reply('moved') end
  local function flat(map)
    local out = {}
    for field, value in pairs(map) do out[#out + 1] = field; out[#out + 1] = value end
    return out
  end
  redis.call('HSET', KEY.version, unpack(flat(ARG.versionFields)))
  if #ARG.unset > 0 then redis.call('HDEL', KEY.machine, unpack(ARG.unset)) end
  redis.call('HSET', KEY.machine, unpack(flat(ARG.machine)))
  redis.call('ZADD', KEY.machines, 0, ARG.name)
  redis.call('DEL', KEY.tags, KEY.published)
  local tags = flat(ARG.tags)
  if #tags > 0 then redis.call('HSET', KEY.tags, unpack(tags)) end
  if ARG.publish then redis.call('ZADD', KEY.published, ARG.version, ARG.version) end
  return reply('created')
`,
});

/**
 * Writes the machine with everything the create gives it, in one script; undefined
 * when a machine of this name exists.
 */
export async function insertMachine(
  client: RedisClient,
  keys: Keys,
  name: string,
  definition: StateMachineDefinition,
  definitionHash: string,
  options: CreateStateMachineOptions,
): Promise<CreatedStateMachine | undefined> {
  const tags = options.tags ?? {};
  const tagCount = Object.keys(tags).length;
  if (tagCount > MAX_TAGS) {
    throw new RuntimeError(
      "TooManyTags",
      `A resource has at most ${MAX_TAGS} tags; this would give it ${tagCount}`,
    );
  }
  if (options.versionDescription !== undefined && !options.publish) {
    throw new TypeError("versionDescription describes the version a create publishes: publish");
  }
  for (let attempt = 0; attempt < 5; attempt++) {
    const [latest, next] = await client.redis.hmget(
      keys.machine(name),
      ...storedFields(M, ["latest", "nextVersion"]),
    );
    if (Number(latest ?? 0) >= 1) return undefined;
    const version = Number(next ?? 0) + 1;
    const createdAt = new Date().toISOString();
    const versionFields = await newVersionFields(
      client,
      keys,
      name,
      version,
      definition,
      { definitionHash, createdAt, createdBy: options.caller?.name ?? "" },
      options.definitionText,
    );
    // A publication's fields, as versions.ts `publish` writes them.
    if (options.publish) {
      Object.assign(
        versionFields,
        toStored(V, { publishedAt: createdAt, description: options.versionDescription }),
      );
    }
    const machine = toStored(M, {
      latest: version,
      nextVersion: version,
      createdAt,
      firstVersion: version,
      type: options.type ?? "STANDARD",
      roleArn: options.roleArn,
      budget: options.budget !== undefined ? JSON.stringify(options.budget) : undefined,
    });
    const reply = await client.call(
      createMachine,
      {
        machine: keys.machine(name),
        version: keys.machineVersion(name, version),
        machines: keys.machines,
        tags: keys.tags(`sm:${name}`),
        published: keys.publishedVersions(name),
      },
      {
        name,
        next: next ?? "",
        version,
        machine,
        unset: storedFields(M, ["roleArn", "budget"]).filter((field) => !(field in machine)),
        versionFields,
        tags,
        publish: options.publish === true,
      },
    );
    if (reply.kind === "exists") return undefined;
    if (reply.kind === "moved") continue; // another create numbered meanwhile
    return createdAnswer(name, version, definitionHash, createdAt, options);
  }
  throw new Error(`creating state machine '${name}' kept racing other creates`);
}

/**
 * A version's fields, linked into the version chain (audit/versions.ts), which goes on
 * from the versions of an earlier machine of this name. Two concurrent updates may read
 * the previous version before it is written: that version's link then starts anew ('').
 */
export async function newVersionFields(
  client: RedisClient,
  keys: Keys,
  name: string,
  version: number,
  definition: StateMachineDefinition,
  made: { definitionHash: string; createdAt: string; createdBy: string },
  definitionText?: string,
): Promise<Record<string, string>> {
  const previous =
    version > 1
      ? ((await client.redis.hget(keys.machineVersion(name, version - 1), V.versionHash)) ?? "")
      : "";
  const link = { name, version, ...made, previous };
  const json = JSON.stringify(definition);
  return toStored(V, {
    ...made,
    definition: json,
    // The text as sent, only where it is not the stored JSON already. Not in the link:
    // the version chain covers the definition by its canonical hash.
    definitionText:
      definitionText !== undefined && definitionText !== json ? definitionText : undefined,
    previousVersionHash: previous,
    versionHash: versionHash(link),
  });
}

/** The machine of this name as a create compares it; undefined when there is none. */
export async function existingMachine(
  client: RedisClient,
  keys: Keys,
  name: string,
): Promise<ExistingMachine | undefined> {
  const [latestText, ty, role, createdAt, budget] = await client.redis.hmget(
    keys.machine(name),
    ...storedFields(M, ["latest", "type", "roleArn", "createdAt", "budget"]),
  );
  const latest = Number(latestText ?? 0);
  if (latest < 1) return undefined;
  const [hash, versionCreatedAt, pt, pd] = await client.redis.hmget(
    keys.machineVersion(name, latest),
    ...storedFields(V, ["definitionHash", "createdAt", "publishedAt", "description"]),
  );
  if (!hash || !versionCreatedAt) return undefined;
  const existing: ExistingMachine = {
    type: ty === "EXPRESS" ? "EXPRESS" : "STANDARD",
    machineCreatedAt: createdAt ?? versionCreatedAt,
    latest: { name, version: latest, definitionHash: hash, createdAt: versionCreatedAt },
  };
  if (role) existing.roleArn = role;
  if (budget) existing.budget = budget;
  if (pt) {
    existing.published = { name, version: latest, publishedAt: pt };
    if (pd !== null) existing.published.description = pd;
  }
  return existing;
}

/** What a create that made the machine answers. */
function createdAnswer(
  name: string,
  version: number,
  definitionHash: string,
  createdAt: string,
  options: CreateStateMachineOptions,
): CreatedStateMachine {
  const created: CreatedStateMachine = {
    name,
    version,
    definitionHash,
    createdAt,
    created: true,
    machineCreatedAt: createdAt,
  };
  if (options.publish) {
    created.published = { name, version, publishedAt: createdAt };
    if (options.versionDescription !== undefined)
      created.published.description = options.versionDescription;
  }
  return created;
}
