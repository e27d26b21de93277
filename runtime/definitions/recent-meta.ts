import type { MachineStore } from "./machines.js";

type MachineMeta = Awaited<ReturnType<MachineStore["meta"]>>;

/** Entries kept at most; past it the cache starts again (a cheap bound, no LRU). */
const MAX_ENTRIES = 10_000;
/** How long an entry answers (ms). */
const FRESH_MS = 1000;

/**
 * A machine's type and latest version, read at most once a second per process for
 * Express starts (AWS too lets starts use the previous definition shortly after an
 * update); this process's own updates and deletes drop it at once (`forget`).
 */
export class RecentMeta {
  private readonly entries = new Map<string, { at: number; meta: MachineMeta }>();

  constructor(private readonly machines: MachineStore) {}

  async get(name: string): Promise<MachineMeta> {
    const hit = this.entries.get(name);
    const now = Date.now();
    if (hit && now - hit.at < FRESH_MS) return hit.meta;
    const meta = await this.machines.meta(name);
    if (this.entries.size > MAX_ENTRIES) this.entries.clear();
    this.entries.set(name, { at: now, meta });
    return meta;
  }

  forget(name: string): void {
    this.entries.delete(name);
  }
}
