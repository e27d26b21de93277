import {
  CreateStateMachineCommand,
  GetExecutionHistoryCommand,
  StartExecutionCommand,
  type HistoryEvent,
  type SFNClient,
} from "@aws-sdk/client-sfn";
import { describe, expect, it } from "vitest";
import { type Stack } from "../e2e/stack.js";
import { compareHistory, parseHistories, type Event } from "../conformance/histories.js";
import { loadCases, readConformanceFile } from "../conformance/load.js";
import { ended, awsStackPerFile } from "./helpers.js";

/**
 * The histories recorded on AWS (test/conformance/data/histories.jsonl), through the
 * product as a user reaches it: `stepwise serve`, the AWS SDK, GetExecutionHistory.
 * `npm run conformance` compares all of them on the in-memory driver; this runs a
 * sample of them on the Redis runtime, whose commits write the same events, so the
 * links (`previousEventId`) and details AWS records are what the endpoint serves.
 */
let stack: Stack;
let client: SFNClient;
const ROLE = "arn:aws:iam::123456789012:role/conformance";

awsStackPerFile((opened) => ({ stack, client } = opened));

/**
 * The two recordings that link a Distributed Map's exit to `MapRunStarted` where the
 * eight others (and Stepwise) link it to `MapRunSucceeded` (data/README.md).
 */
const UNEXPLAINED = [
  "MAP_STATE_REFERENCE_IN_ITEM_SELECTOR",
  "distributed_item_selector_parameters",
];

/**
 * Every 6th recorded history without a Distributed Map (Pass, Choice, Map, Parallel,
 * Wait, variables…), and every 2nd with one (its items run as child executions, the
 * parent's history holding only the Map Run's events).
 */
function sample() {
  const cases = new Map(loadCases("cases.jsonl").map((c) => [c.id, c]));
  const recorded = parseHistories(readConformanceFile("histories.jsonl")).map((r) => ({
    recorded: r,
    tc: cases.get(r.id)!,
  }));
  const distributed = ({ tc }: (typeof recorded)[number]) =>
    JSON.stringify(tc.definition).includes('"DISTRIBUTED"');
  return [
    ...recorded.filter((c) => !distributed(c)).filter((_, i) => i % 6 === 0),
    ...recorded
      .filter((c) => distributed(c) && !UNEXPLAINED.some((id) => c.recorded.id.includes(id)))
      .filter((_, i) => i % 2 === 0),
  ];
}

async function historyOf(executionArn: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.send(
      new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken }),
    );
    events.push(...(page.events ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  return events;
}

describe("histories recorded on AWS, through GetExecutionHistory", () => {
  const cases = sample();

  it(`are served identical for a sample of ${cases.length}`, async () => {
    expect(cases.length).toBeGreaterThanOrEqual(36);
    const differences: string[] = [];
    let n = 0;
    for (const { recorded, tc } of cases) {
      const name = `h${n++}`;
      const created = await client.send(
        new CreateStateMachineCommand({
          name,
          definition: JSON.stringify(tc.definition),
          roleArn: ROLE,
        }),
      );
      const { executionArn } = await client.send(
        new StartExecutionCommand({
          stateMachineArn: created.stateMachineArn,
          input: JSON.stringify(tc.input ?? {}),
          ...(tc.context?.executionName ? { name: tc.context.executionName } : {}),
        }),
      );
      await ended(client, executionArn!);
      const written = (await historyOf(executionArn!)).map(({ timestamp: _t, ...e }) => e as Event);
      const difference = compareHistory(recorded.history, written);
      if (difference) differences.push(`${recorded.id}: ${JSON.stringify(difference)}`);
    }
    expect(differences).toEqual([]);
  }, 120_000);
});
