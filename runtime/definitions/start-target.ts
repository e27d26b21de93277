import type { StartTarget } from "../contract/index.js";
import type { AliasStore } from "./aliases.js";
import type { MachineStore } from "./machines.js";

/**
 * The version a start runs, and what it named (a version, an alias) if anything:
 * an alias picks one of its routes by weight, a version must exist, and without
 * either the latest runs (`latest` when the caller read it already).
 */
export async function resolveTarget(
  stores: { machines: MachineStore; aliases: AliasStore },
  machine: string,
  target: StartTarget,
  latest?: number,
): Promise<{ version: number; pinned?: { version: number; alias?: string } }> {
  if (target.alias !== undefined) {
    const version = await stores.aliases.pick(machine, target.alias, Math.random);
    return { version, pinned: { version, alias: target.alias } };
  }
  if (target.version !== undefined) {
    await stores.machines.version(machine, target.version);
    return { version: target.version, pinned: { version: target.version } };
  }
  return { version: latest ?? (await stores.machines.latest(machine)) };
}
