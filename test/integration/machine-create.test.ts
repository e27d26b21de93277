import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import { MachineStore } from "../../runtime/definitions/machines.js";
import { defaultRoleArn } from "../../runtime/definitions/machine-create.js";
import { TagStore } from "../../runtime/definitions/tags.js";
import { VersionStore } from "../../runtime/definitions/versions.js";
import { brokenVersionLink, type VersionLink } from "../../runtime/audit/versions.js";
import { makeKeys, type Keys } from "../../runtime/store/keys.js";
import { RedisClient } from "../../runtime/store/redis.js";
import { REDIS_URL, deleteKeys, randomPrefix } from "./helpers.js";

/**
 * Creating a state machine (runtime/definitions/machine-create.ts): one script writes
 * the machine, its version, tags and publication; an identical create answers the
 * existing machine (AWS), any create of an existing name can be refused (REST).
 */
let client: RedisClient;
let keys: Keys;
let prefix: string;
let machines: MachineStore;
let versions: VersionStore;
let tags: TagStore;

beforeAll(() => {
  prefix = randomPrefix();
  keys = makeKeys(prefix);
  client = new RedisClient(REDIS_URL, { name: "machine-create-test" });
  machines = new MachineStore(client, keys);
  versions = new VersionStore(client, keys, machines);
  tags = new TagStore(client, keys);
});
afterAll(async () => {
  await client.close();
  await deleteKeys(REDIS_URL, prefix);
});

const pass = (result: unknown): StateMachineDefinition =>
  ({
    StartAt: "P",
    States: { P: { Type: "Pass", Result: result, End: true } },
  }) as unknown as StateMachineDefinition;

/** The same definition, its keys in another order (what a pretty-printer may do). */
const reordered = (result: unknown): StateMachineDefinition =>
  ({
    States: { P: { End: true, Result: result, Type: "Pass" } },
    StartAt: "P",
  }) as unknown as StateMachineDefinition;

describe("createIdempotent", () => {
  it("creates with tags and a published version, then answers a repeat as it is", async () => {
    const first = await machines.createIdempotent("idem", pass(1), {
      roleArn: "arn:aws:iam::123456789012:role/a",
      tags: { team: "a" },
      publish: true,
      versionDescription: "first",
      caller: { name: "alice" },
    });
    expect(first).toMatchObject({ name: "idem", version: 1, created: true });
    expect(first.machineCreatedAt).toBe(first.createdAt);
    expect(first.published).toEqual({
      name: "idem",
      version: 1,
      publishedAt: first.createdAt,
      description: "first",
    });

    const again = await machines.createIdempotent("idem", reordered(1), {
      roleArn: "arn:aws:iam::123456789012:role/a",
      tags: { team: "b", other: "x" },
      publish: true,
      versionDescription: "first",
    });
    expect(again).toEqual({ ...first, created: false });

    // Nothing applied twice: one version, one publication, the first tags.
    const detail = await machines.get("idem");
    expect(detail.versions.map((v) => v.version)).toEqual([1]);
    expect(detail).toMatchObject({ type: "STANDARD", roleArn: "arn:aws:iam::123456789012:role/a" });
    expect((await versions.list("idem", {})).items).toEqual([first.published]);
    expect(await tags.list({ kind: "stateMachine", name: "idem" })).toEqual({ team: "a" });

    // Without the role or the publication, the same machine still.
    const plain = await machines.createIdempotent("idem", pass(1));
    expect(plain).toMatchObject({ version: 1, created: false });
    expect(plain.published).toBeUndefined();
  });

  it("refuses, changing nothing, a create that asks for anything else", async () => {
    await machines.createIdempotent("other", pass(1), { roleArn: "arn:aws:iam::1:role/r" });
    const conflicts: [StateMachineDefinition, Parameters<MachineStore["createIdempotent"]>[2]][] = [
      [pass(2), {}],
      [pass(1), { type: "EXPRESS" }],
      [pass(1), { roleArn: "arn:aws:iam::1:role/s" }],
      [pass(1), { budget: { maxModelCalls: 3 } }],
      [pass(1), { publish: true }],
    ];
    for (const [definition, options] of conflicts) {
      await expect(
        machines.createIdempotent("other", definition, { ...options, tags: { t: "1" } }),
        JSON.stringify(options),
      ).rejects.toMatchObject({
        code: "StateMachineAlreadyExists",
        message: expect.stringMatching(/^State machine 'other' already exists \(.+\)$/),
      });
    }
    expect((await machines.get("other")).versions).toHaveLength(1);
    expect((await versions.list("other", {})).items).toEqual([]);
    expect(await tags.list({ kind: "stateMachine", name: "other" })).toEqual({});

    // Published since: a create that publishes is the same machine with the same description only.
    await versions.publish("other", { description: "d" });
    await expect(
      machines.createIdempotent("other", pass(1), { publish: true, versionDescription: "e" }),
    ).rejects.toMatchObject({ code: "StateMachineAlreadyExists" });
    const published = await machines.createIdempotent("other", pass(1), {
      publish: true,
      versionDescription: "d",
    });
    expect(published).toMatchObject({
      created: false,
      published: { version: 1, description: "d" },
    });

    // After an update, the latest version is what a create compares.
    await machines.update("other", pass(3));
    await expect(machines.createIdempotent("other", pass(1))).rejects.toMatchObject({
      code: "StateMachineAlreadyExists",
    });
    expect(await machines.createIdempotent("other", pass(3))).toMatchObject({
      version: 2,
      created: false,
    });
  });

  it("a machine created without a role is the same as one asking for the default role", async () => {
    await machines.create("no-role", pass(1));
    expect(
      await machines.createIdempotent("no-role", pass(1), { roleArn: defaultRoleArn() }),
    ).toMatchObject({ created: false });
    await expect(
      machines.createIdempotent("no-role", pass(1), { roleArn: "arn:aws:iam::1:role/x" }),
    ).rejects.toMatchObject({ code: "StateMachineAlreadyExists" });
  });

  it("concurrent identical creates make one machine and one version", async () => {
    const all = await Promise.all(
      Array.from({ length: 8 }, () =>
        machines.createIdempotent("race", pass(1), { tags: { k: "v" }, publish: true }),
      ),
    );
    expect(all.filter((c) => c.created)).toHaveLength(1);
    expect(new Set(all.map((c) => c.machineCreatedAt)).size).toBe(1);
    expect(new Set(all.map((c) => c.published?.version)).size).toBe(1);
    expect((await machines.get("race")).versions).toHaveLength(1);
    expect((await versions.list("race", {})).items).toHaveLength(1);
  });

  it("refuses more than 50 tags, and versionDescription without publish", async () => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));
    await expect(
      machines.createIdempotent("tagged", pass(1), { tags: many }),
    ).rejects.toMatchObject({ code: "TooManyTags" });
    await expect(
      machines.createIdempotent("tagged", pass(1), { versionDescription: "d" }),
    ).rejects.toThrow(TypeError);
    await expect(machines.get("tagged")).rejects.toMatchObject({
      code: "StateMachineDoesNotExist",
    });
  });
});

describe("create (REST's: an existing name is refused)", () => {
  it("refuses the identical definition as any other; concurrent creates: one wins", async () => {
    await machines.create("strict", pass(1));
    for (const definition of [pass(1), pass(2)]) {
      await expect(machines.create("strict", definition)).rejects.toMatchObject({
        code: "StateMachineAlreadyExists",
        message: "State machine 'strict' already exists",
      });
    }
    const settled = await Promise.allSettled(
      Array.from({ length: 6 }, () => machines.create("strict-race", pass(1))),
    );
    expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(1);
    expect(
      settled.filter(
        (s) =>
          s.status === "rejected" &&
          (s.reason as { code?: string }).code === "StateMachineAlreadyExists",
      ),
    ).toHaveLength(5);
  });

  it("a name created again after its deletion numbers on, its version chain unbroken", async () => {
    await machines.create("again", pass(1), { caller: { name: "alice" } });
    await machines.update("again", pass(2));
    await machines.delete("again");
    const recreated = await machines.createIdempotent("again", pass(1), {
      tags: { fresh: "yes" },
    });
    expect(recreated).toMatchObject({ version: 3, created: true });
    const detail = await machines.get("again");
    expect(detail.versions.map((v) => v.version)).toEqual([3]);
    expect(detail.machineCreatedAt).toBe(recreated.createdAt);
    expect(await tags.list({ kind: "stateMachine", name: "again" })).toEqual({ fresh: "yes" });

    const links: VersionLink[] = [];
    for (const version of [1, 2, 3]) {
      const [hash, createdAt, by, pvh, vh] = await client.redis.hmget(
        keys.machineVersion("again", version),
        "hash",
        "createdAt",
        "by",
        "pvh",
        "vh",
      );
      links.push({
        name: "again",
        version,
        definitionHash: hash!,
        createdAt: createdAt!,
        createdBy: by!,
        previous: pvh!,
        hash: vh!,
      });
    }
    expect(links[0]!.createdBy).toBe("alice");
    expect(brokenVersionLink(links)).toBeUndefined();
  });

  it("takes over a name an interrupted create of an earlier release left claimed", async () => {
    // What the previous create left when it died between claiming and writing.
    await client.redis.hset(keys.machine("zombie"), { latest: "0", ty: "EXPRESS", role: "r" });
    const created = await machines.create("zombie", pass(1));
    expect(created.version).toBe(1);
    const detail = await machines.get("zombie");
    expect(detail.type).toBe("STANDARD");
    expect(detail.roleArn).toBeUndefined();
  });
});
