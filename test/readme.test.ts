import { describe, expect, it } from "vitest";
import { blocks, PRINTS, session, sh, shellCommands, tour } from "./readme-blocks.js";

/** README.md's commands that need no service, one by one (see readme-blocks.ts). */
describe("the README's commands", () => {
  it("are all run: only npm ci, the suite itself and the local cluster are left out", () => {
    expect(tour.length).toBeGreaterThanOrEqual(6);
    const leftOut = blocks.filter((b) => !session.includes(b) && !tour.some((c) => b.includes(c)));
    expect(leftOut.map((b) => shellCommands(b)[0])).toEqual([
      "npm ci && npx stepwise serve",
      "npm ci && npm test",
      "npx tsx scripts/redis-cluster.ts                        # a local 3-master cluster, prints its nodes",
    ]);
    // The Quick start's command is run (without npm ci) to serve the session.
    expect(session.length).toBeGreaterThanOrEqual(4);
  });

  it.each(tour)(
    "%s",
    async (command) => {
      const { code, output } = await sh(command);
      expect({ code, output }).toMatchObject({ code: 0 });
      for (const [pattern, text] of PRINTS)
        if (pattern.test(command)) expect(output).toContain(text);
    },
    60_000,
  );
});
