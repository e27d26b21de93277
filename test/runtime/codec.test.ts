import { describe, expect, it } from "vitest";
import { pack, unpack } from "../../runtime/store/codec.js";
import { seededRandom } from "../../engine/core/random.js";

/** Random JSON text: nested objects/arrays, unicode, escapes, numbers. */
function randomJson(next: () => number, depth = 0): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 4 : 6));
  const str = (): string =>
    Array.from({ length: Math.floor(next() * 12) }, () =>
      String.fromCodePoint(
        [0x41, 0x22, 0x5c, 0x0a, 0x01, 0xe9, 0x1f600, 0x4e2d][Math.floor(next() * 8)]! +
          Math.floor(next() * 3),
      ),
    ).join("");
  switch (pick) {
    case 0:
      return str();
    case 1:
      return Math.floor(next() * 1e9) / (next() < 0.5 ? 1 : 7);
    case 2:
      return next() < 0.5 ? null : next() < 0.5;
    case 3:
      // Hex strings of 31, 32 and 33 digits, upper case among them: only 32 lowercase pack short.
      if (next() < 0.3) {
        const hex = Array.from(
          { length: 31 + Math.floor(next() * 3) },
          () => "0123456789abcdefA"[Math.floor(next() * 17)],
        ).join("");
        return next() < 0.5 ? hex : JSON.stringify({ seed: hex });
      }
      return next() < 0.33
        ? `arn:aws:states:local:000000000000:execution:${str()}`
        : next() < 0.5
          ? `arn:aws:states:us-east-1:123456789012:execution:${str()}`
          : new Date(Math.floor(next() * 4e12)).toISOString();
    case 4:
      return Array.from({ length: Math.floor(next() * 5) }, () => randomJson(next, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(next() * 5) }, () => [str(), randomJson(next, depth + 1)]),
      );
  }
}

describe("storage codec", () => {
  it("gives back exactly the JSON text it packed, for 2,000 random values", () => {
    const rng = seededRandom("codec", 0);
    for (let i = 0; i < 2000; i++) {
      const text = JSON.stringify(randomJson(() => rng.next()));
      expect(unpack(pack(text))).toBe(text);
    }
  });

  it("shrinks the values it is made for to well under half", () => {
    const state = JSON.stringify({
      runId: "arn:aws:states:local:000000000000:execution:park:p1",
      scope: "",
      status: "RUNNING",
      variables: {},
      random: 0,
      lastEventId: 3,
      serial: 1,
      current: {
        name: "Approve",
        input: { order: "o-1" },
        enteredTime: "2026-12-01T03:05:43.482Z",
        enteredEventId: 2,
        phase: { kind: "task", taskId: "arn:aws:states:local:000000000000:execution:park:p1#1" },
      },
    });
    expect(pack(state).length).toBeLessThan(state.length / 2);
    expect(unpack(pack(state))).toBe(state);
  });

  it("reads plain JSON as is, and stores text it cannot encode reversibly as plain", () => {
    expect(unpack(Buffer.from('{"a":1}'))).toBe('{"a":1}');
    expect(unpack('{"a":1}')).toBe('{"a":1}');
    // Not JSON.stringify output (a raw control character): stored unchanged.
    const odd = '{"a":"\u0001 raw"}';
    expect(pack(odd)).toBe(odd);
    expect(unpack(pack(odd))).toBe(odd);
  });

  it("encodes with the marker, one character per frequent fragment, timestamps in base 36", () => {
    const event = JSON.stringify({
      id: 3,
      previousEventId: 2,
      timestamp: "2026-12-01T00:00:00.000Z",
    });
    const ms = Date.parse("2026-12-01T00:00:00.000Z").toString(36);
    expect(pack(event)).toBe(`\u001f\u00013\u00022\u0003"\u001d${ms}"}`);
  });

  it("leaves timestamps alone that would not come back the same", () => {
    for (const odd of [
      "2026-02-30T00:00:00.000Z",
      "0000-01-01T00:00:00.000Z",
      "2026-12-01T24:00:00.000Z",
    ]) {
      const text = JSON.stringify({ at: odd });
      expect(pack(text)).toContain(odd);
      expect(unpack(pack(text))).toBe(text);
    }
  });

  it("reads values packed before fragments were appended, and packs today's ARNs short", () => {
    const journal = JSON.stringify({
      runId: "arn:aws:states:us-east-1:123456789012:execution:park:p1",
      event: {
        type: "Started",
        input: { order: "o-1" },
        seed: "06862204cf6310836b2c38d08531cc32",
        time: "2026-12-01T22:18:00.438Z",
        eventId: 1,
      },
    });
    const event = JSON.stringify({
      id: 4,
      previousEventId: 3,
      timestamp: "2026-12-01T22:18:00.438Z",
      type: "TaskStarted",
      taskStartedEventDetails: { resourceType: "stepwise", resource: "waitForTaskToken" },
      hash: "e55fbfe9631673832d2ca3353120ca2d4e9b42ea72726735f9bf5f001336c10a",
    });
    // As the table before them packed these two (158 and 121 characters).
    const before = [
      '\u001f{"runId":"arn:aws:states:us-east-1:123456789012:execution:park:p1\u001bStarted","input":{"order":"o-1"},"seed":"06862204cf6310836b2c38d08531cc32"\u001c"\u001dmx59czg6"\u001e#1}}',
      '\u001f\u00014\u00023\u0003"\u001dmx59czg6"\u0004\u001e^\rstepwise\u000fwaitFor\u001e^Token"},"hash":"e55fbfe9631673832d2ca3353120ca2d4e9b42ea72726735f9bf5f001336c10a"}',
    ];
    expect(before.map((stored) => unpack(stored))).toEqual([journal, event]);
    expect(pack(journal).length).toBeLessThanOrEqual(before[0]!.length - 75);
    expect(pack(event).length).toBeLessThan(before[1]!.length);
    expect(unpack(pack(journal))).toBe(journal);
    expect(unpack(pack(event))).toBe(event);
  });

  it("packs a parked execution's ExecutionStarted and task events short, and reads them as stored before", () => {
    const at = new Date(parseInt("mx5t5zax", 36)).toISOString();
    const started = JSON.stringify({
      id: 1,
      previousEventId: 0,
      timestamp: at,
      type: "ExecutionStarted",
      executionStartedEventDetails: {
        input: '{"order":"o-1"}',
        roleArn: "arn:aws:iam::000000000000:role/stepwise",
      },
      hash: "MfYilEBet_4",
    });
    const scheduled = (resource: string) =>
      JSON.stringify({
        id: 3,
        previousEventId: 2,
        timestamp: at,
        type: "TaskScheduled",
        taskScheduledEventDetails: {
          resourceType: "stepwise",
          resource,
          region: "local",
          parameters: "{}",
        },
        hash: "MfYilEBet_4",
      });
    // As the table before these fragments packed them (102 and 85 characters).
    const before = [
      '\u001f\u00011\u00020\u0003"\u001dmx5t5zax"\u0004\n{\torder\t:\to-1\t}","roleArn":"arn:aws:iam::000000000000:role/stepwise"}\u001eGMfYilEBet_4"}',
      '\u001f\u00013\u00022\u0003"\u001dmx5t5zax"\u0004\u001e^\fstepwise\u000fwaitFor\u001e^Token\u0010{}"}\u001eGMfYilEBet_4"}',
    ];
    expect(before.map((stored) => unpack(stored))).toEqual([
      started,
      scheduled("waitForTaskToken"),
    ]);
    for (const text of [started, scheduled("waitForTaskToken"), scheduled("approval")]) {
      expect(unpack(pack(text))).toBe(text);
    }
    expect(pack(started).length).toBeLessThanOrEqual(before[0]!.length - 50);
    expect(pack(scheduled("waitForTaskToken")).length).toBeLessThanOrEqual(before[1]!.length - 20);
    expect(pack(scheduled("approval")).length).toBeLessThanOrEqual(before[1]!.length - 20);
  });

  it("packs a quoted 32-digit lowercase hex string as 22 base64url characters, anywhere", () => {
    const seed = "533f5da2d55dd1cd75415da1bf050f13";
    const state = JSON.stringify({
      seed,
      phase: { operationKey: "cec33f3e1400e0cd72d48fd46464b294" },
    });
    const packed = pack(state);
    expect(packed).not.toContain(seed);
    expect(packed).toContain(`\u001eZ${Buffer.from(seed, "hex").toString("base64url")}`);
    expect(unpack(packed)).toBe(state);
    // The marker costs one character; each hex string saves eight.
    expect(packed.length).toBe(state.length + 1 - 2 * 8);
    // Inside an escaped JSON text, next to other codes, and what is not one: 64 digits,
    // upper case, unquoted.
    for (const text of [
      JSON.stringify({ input: JSON.stringify({ k: seed }) }),
      JSON.stringify([seed, seed, `${seed}${seed}`, seed.toUpperCase(), `x${seed}`]),
      JSON.stringify({ timestamp: "2026-12-01T00:00:00.000Z", seed }),
      // After a fragment, the first 32 of 64 digits pack; the rest stay as they are.
      JSON.stringify({ id: 1, hash: `${seed}${seed}` }),
    ]) {
      expect(unpack(pack(text))).toBe(text);
    }
    // The code is the bytes' base64url, for any digits.
    const rng = seededRandom("hex", 0);
    for (let i = 0; i < 500; i++) {
      const hex = Array.from(
        { length: 32 },
        () => "0123456789abcdef"[Math.floor(rng.next() * 16)],
      ).join("");
      const packed = pack(JSON.stringify(hex));
      expect(packed).toBe(`\u001f"\u001eZ${Buffer.from(hex, "hex").toString("base64url")}"`);
      expect(unpack(packed)).toBe(JSON.stringify(hex));
    }
    expect(pack(JSON.stringify(`${seed}${seed}`))).toContain(seed);
    expect(pack(JSON.stringify(seed.toUpperCase()))).toContain(seed.toUpperCase());
  });

  it("reads control characters that start no code as they are (as the regular expression it replaced did)", () => {
    // A time mark without digits, a long mark at the end or before a line separator, U+0000.
    for (const text of ['a\u001d"b', "a\u001e", "a\u001e\u2028", "\u0000x\u001f"]) {
      expect(unpack(`\u001f${text}`)).toBe(text);
    }
    expect(unpack("\u001f\u001d0\u001d1")).toBe(
      `${new Date(0).toISOString()}${new Date(1).toISOString()}`,
    );
  });

  it("converts each timestamp right when the same ones come again and again (they are cached)", () => {
    const times = [
      "2026-12-01T00:00:00.000Z",
      "2026-12-01T00:00:00.001Z",
      "2026-02-30T00:00:00.000Z",
    ];
    for (let i = 0; i < 30; i++) {
      const text = JSON.stringify({ at: times[i % 3], again: times[(i * 7) % 3] });
      const packed = pack(text);
      expect(unpack(packed)).toBe(text);
      expect(packed.includes("2026-02-30")).toBe(text.includes("2026-02-30"));
    }
  });

  it("keeps a 256 KiB value intact", () => {
    const big = JSON.stringify({ blob: "x".repeat(256 * 1024), n: [1, 2, 3] });
    expect(unpack(pack(big))).toBe(big);
  });
});
