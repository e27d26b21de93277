import { spawn, type ChildProcess } from "node:child_process";
import { Redis } from "ioredis";

/**
 * Counts the commands that name a test's keys, with MONITOR on real Redis
 * (redis-cli's: one line per command, `<time> [<db> <client>] "<cmd>" "<arg>" …`),
 * commands run inside scripts included.
 */
export class CommandMonitor {
  private readonly monitor: ChildProcess;
  private readonly redis: Redis;
  private seen: string[][] | undefined;
  /** Of `seen`, those a client sent itself (not run inside a script). */
  private direct: string[][] = [];

  constructor(
    redisUrl: string,
    private readonly prefix: string,
  ) {
    this.redis = new Redis(redisUrl);
    this.monitor = spawn("redis-cli", ["-u", redisUrl, "monitor"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let partial = "";
    this.monitor.stdout!.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (!this.seen || !line.includes(prefix)) continue;
        const command = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
        this.seen.push(command);
        // A command a script ran is shown as from client "lua": `[0 lua]`.
        if (!/^\S+ \[\d+ lua\]/.test(line)) this.direct.push(command);
      }
    });
  }

  /**
   * The commands naming the prefix's keys while `work` runs; `direct`: those of
   * them a client sent, not a script.
   */
  async commandsOf<T>(
    work: () => Promise<T>,
  ): Promise<{ result: T; commands: string[][]; direct: string[][] }> {
    this.seen = [];
    await this.marker("start");
    this.seen = [];
    this.direct = [];
    const result = await work();
    await this.marker("end");
    const marker = (a: string[]) => a.join(" ").includes("marker:");
    const commands = this.seen.filter((a) => !marker(a));
    const direct = this.direct.filter((a) => !marker(a));
    this.seen = undefined;
    return { result, commands, direct };
  }

  close(): void {
    this.monitor.kill();
    this.redis.disconnect();
  }

  /**
   * MONITOR streams asynchronously: a marker command shows when it has caught up.
   * It is sent again every 100 ms: on a busy machine redis-cli may attach after the
   * first one, which it would then never show.
   */
  private async marker(tag: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (let i = 0; !this.seen!.some((a) => a.join(" ").includes(`marker:${tag}`)); i++) {
      if (Date.now() > deadline) throw new Error("MONITOR did not catch up");
      if (i % 10 === 0) await this.redis.get(`${this.prefix}:marker:${tag}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}
