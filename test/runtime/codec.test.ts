import { describe, expect, it } from "vitest";
import { pack, unpack } from "../../runtime/codec.js";
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
      return `arn:aws:states:local:000000000000:execution:${str()}`;
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
  });

  it("reads plain JSON written before packing existed, and refuses unknown formats", () => {
    expect(unpack(Buffer.from('{"a":1}'))).toBe('{"a":1}');
    expect(unpack('{"a":1}')).toBe('{"a":1}');
    expect(() => unpack(Buffer.from([0x09, 1, 2]))).toThrow(/unknown stored format 9/);
    expect(() => unpack(Buffer.alloc(0))).toThrow(/unknown stored format/);
  });

  it("keeps a 256 KiB value intact", () => {
    const big = JSON.stringify({ blob: "x".repeat(256 * 1024), n: [1, 2, 3] });
    expect(unpack(pack(big))).toBe(big);
  });
});
