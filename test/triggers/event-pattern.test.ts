import { describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import {
  checkPattern,
  matches,
  type EventPattern,
} from "../../runtime/triggers/events/event-pattern.js";

// The examples of the Amazon EventBridge User Guide, written down with their source:
// - content filtering: https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-content-based-filtering.html
// - comparison operators: https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html
// - arrays: https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-arrays.html
// - event patterns (null, empty strings, nesting): https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html

/** The guide's sample EC2 event. */
const ec2Event = {
  version: "0",
  id: "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
  "detail-type": "EC2 Instance State-change Notification",
  source: "aws.ec2",
  account: "111122223333",
  time: "2017-12-22T18:43:48Z",
  region: "us-west-1",
  resources: ["arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0"],
  detail: { "instance-id": "i-1234567890abcdef0", state: "terminated" },
};

function event(detail: Record<string, Json>, extra: Record<string, Json> = {}): Json {
  return { ...ec2Event, ...extra, detail };
}

const cases: [string, EventPattern, Json, boolean][] = [
  // Exact values, and an array of values is an OR.
  ["exact source", { source: ["aws.ec2"] }, ec2Event, true],
  ["exact source, near miss", { source: ["aws.ec"] }, ec2Event, false],
  ["one of several values", { detail: { state: ["running", "terminated"] } }, ec2Event, true],
  ["fields are AND-ed", { source: ["aws.ec2"], detail: { state: ["running"] } }, ec2Event, false],
  ["case sensitive", { source: ["AWS.EC2"] }, ec2Event, false],
  // Prefix (content filtering: "time" starting with "2017-10-02").
  ["prefix", { time: [{ prefix: "2017-10-02" }] }, { time: "2017-10-02T18:43:48Z" }, true],
  ["prefix, miss", { time: [{ prefix: "2017-10-02" }] }, { time: "2017-10-03T18:43:48Z" }, false],
  [
    "prefix ignoring case",
    { detail: { service: [{ prefix: { "equals-ignore-case": "EventB" } }] } },
    { detail: { service: "eventbridge" } },
    true,
  ],
  // Suffix.
  ["suffix", { FileName: [{ suffix: ".png" }] }, { FileName: "image.png" }, true],
  ["suffix, miss", { FileName: [{ suffix: ".png" }] }, { FileName: "image.jpg" }, false],
  [
    "suffix ignoring case",
    { detail: { FileName: [{ suffix: { "equals-ignore-case": ".png" } }] } },
    { detail: { FileName: "IMAGE.PNG" } },
    true,
  ],
  // Anything-but: a string, a number, a list, a prefix, a suffix, ignoring case, a wildcard.
  [
    "anything-but a string",
    { detail: { state: [{ "anything-but": "initializing" }] } },
    event({ state: "running" }),
    true,
  ],
  [
    "anything-but a string, miss",
    { detail: { state: [{ "anything-but": "initializing" }] } },
    event({ state: "initializing" }),
    false,
  ],
  [
    "anything-but a number",
    { detail: { "x-limit": [{ "anything-but": 123 }] } },
    event({ "x-limit": 456 }),
    true,
  ],
  [
    "anything-but a number, miss",
    { detail: { "x-limit": [{ "anything-but": 123 }] } },
    event({ "x-limit": 123 }),
    false,
  ],
  [
    "anything-but a list",
    { detail: { state: [{ "anything-but": ["stopped", "overloaded"] }] } },
    event({ state: "pending" }),
    true,
  ],
  [
    "anything-but a list, miss",
    { detail: { state: [{ "anything-but": ["stopped", "overloaded"] }] } },
    event({ state: "overloaded" }),
    false,
  ],
  [
    "anything-but a prefix",
    { detail: { state: [{ "anything-but": { prefix: "init" } }] } },
    event({ state: "running" }),
    true,
  ],
  [
    "anything-but a prefix, miss",
    { detail: { state: [{ "anything-but": { prefix: "init" } }] } },
    event({ state: "initializing" }),
    false,
  ],
  [
    "anything-but a suffix",
    { detail: { FileName: [{ "anything-but": { suffix: ".txt" } }] } },
    event({ FileName: "a.png" }),
    true,
  ],
  [
    "anything-but a suffix, miss",
    { detail: { FileName: [{ "anything-but": { suffix: ".txt" } }] } },
    event({ FileName: "a.txt" }),
    false,
  ],
  [
    "anything-but ignoring case",
    {
      detail: { state: [{ "anything-but": { "equals-ignore-case": ["Stopped", "OverLoaded"] } }] },
    },
    event({ state: "STOPPED" }),
    false,
  ],
  [
    "anything-but a wildcard",
    { detail: { FilePath: [{ "anything-but": { wildcard: "*/lib/*" } }] } },
    event({ FilePath: "/usr/bin/x" }),
    true,
  ],
  [
    "anything-but a wildcard, miss",
    { detail: { FilePath: [{ "anything-but": { wildcard: "*/lib/*" } }] } },
    event({ FilePath: "/usr/lib/x" }),
    false,
  ],
  [
    "anything-but does not match a missing field",
    { detail: { state: [{ "anything-but": "x" }] } },
    event({}),
    false,
  ],
  // Numeric (the guide's c-count / d-count / x-limit example).
  [
    "numeric ranges",
    {
      detail: {
        "c-count": [{ numeric: [">", 0, "<=", 5] }],
        "d-count": [{ numeric: ["<", 10] }],
        "x-limit": [{ numeric: ["=", 3.018e2] }],
      },
    },
    event({ "c-count": 5, "d-count": 7, "x-limit": 301.8 }),
    true,
  ],
  [
    "numeric, out of range",
    { detail: { "c-count": [{ numeric: [">", 0, "<=", 5] }] } },
    event({ "c-count": 6 }),
    false,
  ],
  [
    "numeric needs a number",
    { detail: { "c-count": [{ numeric: [">", 0] }] } },
    event({ "c-count": "5" }),
    false,
  ],
  // IP address ranges.
  [
    "cidr",
    { detail: { sourceIPAddress: [{ cidr: "10.0.0.0/24" }] } },
    event({ sourceIPAddress: "10.0.0.255" }),
    true,
  ],
  [
    "cidr, miss",
    { detail: { sourceIPAddress: [{ cidr: "10.0.0.0/24" }] } },
    event({ sourceIPAddress: "10.0.1.1" }),
    false,
  ],
  // Exists.
  ["exists: true", { detail: { state: [{ exists: true }] } }, ec2Event, true],
  ["exists: true, absent", { detail: { state: [{ exists: true }] } }, event({}), false],
  ["exists: false", { detail: { "c-count": [{ exists: false }] } }, ec2Event, true],
  ["exists: false, present", { detail: { state: [{ exists: false }] } }, ec2Event, false],
  ["exists: only leaves", { detail: [{ exists: true }] }, ec2Event, false],
  // Equals-ignore-case.
  [
    "equals-ignore-case",
    { "detail-type": [{ "equals-ignore-case": "ec2 instance state-change notification" }] },
    ec2Event,
    true,
  ],
  // Wildcard.
  [
    "wildcard",
    { EventBusArn: [{ wildcard: "arn:aws:events:us-east-1:*:event-bus/*" }] },
    { EventBusArn: "arn:aws:events:us-east-1:123456789012:event-bus/orders" },
    true,
  ],
  [
    "wildcard, miss",
    { EventBusArn: [{ wildcard: "arn:aws:events:us-east-1:*:event-bus/*" }] },
    { EventBusArn: "arn:aws:events:eu-west-1:123456789012:event-bus/orders" },
    false,
  ],
  ["wildcard, an escaped star is a star", { name: [{ wildcard: "a\\*b" }] }, { name: "a*b" }, true],
  ["wildcard, an escaped star, miss", { name: [{ wildcard: "a\\*b" }] }, { name: "axxb" }, false],
  // $or (the guide's example: any of three numeric conditions).
  [
    "$or",
    {
      detail: {
        $or: [
          { "c-count": [{ numeric: [">", 0, "<=", 5] }] },
          { "d-count": [{ numeric: ["<", 10] }] },
          { "x-limit": [{ numeric: [">", 0, "<", 10000] }] },
        ],
      },
    },
    event({ "d-count": 3 }),
    true,
  ],
  [
    "$or, none",
    {
      detail: {
        $or: [
          { "c-count": [{ numeric: [">", 0, "<=", 5] }] },
          { "d-count": [{ numeric: ["<", 10] }] },
        ],
      },
    },
    event({ "c-count": 9, "d-count": 11 }),
    false,
  ],
  [
    "$or at the top, across levels",
    { source: ["aws.ec2"], $or: [{ "detail-type": ["x"] }, { detail: { state: ["terminated"] } }] },
    ec2Event,
    true,
  ],
  // Arrays: any value of the event's array matches any value of the pattern's.
  [
    "arrays: any value",
    { resources: ["arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0", "arn:other"] },
    ec2Event,
    true,
  ],
  ["arrays: none", { resources: ["arn:other"] }, ec2Event, false],
  [
    "arrays of objects are flattened",
    { detail: { items: { sku: ["B"] } } },
    event({ items: [{ sku: "A" }, { sku: "B" }] }),
    true,
  ],
  // Null and empty strings.
  ["null", { detail: { responseElements: [null] } }, event({ responseElements: null }), true],
  ["empty string", { detail: { eventVersion: [""] } }, event({ eventVersion: "" }), true],
  ["null is not absent", { detail: { responseElements: [null] } }, event({}), false],
  // Nested objects must follow the event's structure.
  ["nesting", { detail: { "instance-id": ["i-1234567890abcdef0"] } }, ec2Event, true],
  ["nesting, a leaf is not an object", { detail: { state: { x: ["y"] } } }, ec2Event, false],
];

describe("matching (EventBridge User Guide examples)", () => {
  it.each(cases)("%s", (_name, pattern, evt, expected) => {
    expect(checkPattern(pattern)).toEqual([]);
    expect(matches(pattern, evt)).toBe(expected);
  });
});

describe("malformed patterns", () => {
  it.each([
    [[], ""],
    [{}, ""],
    [{ source: "aws.ec2" }, "/source"],
    [{ source: [] }, "/source"],
    [{ source: [{ prefix: 1 }] }, "/source/0/prefix"],
    [{ source: [{ nope: "x" }] }, "/source/0"],
    [{ detail: { n: [{ numeric: [">", "x"] }] } }, "/detail/n/0/numeric"],
    [{ detail: { n: [{ numeric: ["~", 1] }] } }, "/detail/n/0/numeric"],
    [{ detail: { n: [{ exists: "yes" }] } }, "/detail/n/0/exists"],
    [{ detail: { n: [{ "anything-but": [1, "a"] }] } }, "/detail/n/0/anything-but"],
    [{ $or: "x" }, "/$or"],
    [{ ip: [{ cidr: "10.0.0.0/40" }] }, "/ip/0/cidr"],
  ] as [unknown, string][])("%j is refused at %s", (pattern, pointer) => {
    const problems = checkPattern(pattern);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]!.pointer).toBe(pointer);
  });
});
