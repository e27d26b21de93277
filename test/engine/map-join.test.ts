import { describe, expect, it } from "vitest";
import type { StateMachineDefinition, StateScope } from "../../engine/core/definition.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { ChildOutcome } from "../../engine/core/events.js";
import type { Json } from "../../engine/core/json.js";
import type { Join } from "../../engine/core/run.js";
import { compileProgram } from "../../engine/program.js";
import { replay } from "../../engine/replay.js";
import { at, details, effectsOf, execute, only, single, Stepper, types } from "./helpers.js";

// How a Map or Parallel joins its children (engine/flow/join.ts): children's outputs
// stay with the driver until the join completes, and the parent keeps only counters.
// The expectations below were recorded from the implementation that kept every
// child's output and a per-child progress string in the parent's state: outputs,
// errors and the whole history (ids, order, timestamps) must stay exactly the same.

/** Each item waits `item.s` seconds, then outputs `item.v`, or fails when `item.fail`. */
const timed: StateScope = {
  StartAt: "Check",
  States: {
    Check: {
      Type: "Choice",
      Choices: [{ Variable: "$.fail", IsPresent: true, Next: "Boom" }],
      Default: "W",
    },
    Boom: { Type: "Fail", Error: "Item.Failed", Cause: "bad item" },
    W: { Type: "Wait", SecondsPath: "$.s", Next: "Out" },
    Out: { Type: "Pass", InputPath: "$.v", End: true },
  },
};

/** A failing item fails after `fail` seconds. */
const slowFail: StateScope = {
  StartAt: "W",
  States: {
    W: { Type: "Wait", SecondsPath: "$.s", Next: "Check" },
    Check: {
      Type: "Choice",
      Choices: [{ Variable: "$.fail", IsPresent: true, Next: "Boom" }],
      Default: "Out",
    },
    Boom: { Type: "Fail", Error: "Item.Failed", Cause: "bad item" },
    Out: { Type: "Pass", InputPath: "$.v", End: true },
  },
};

/** One line per history event: id, previous id, ms since T0, type and details. */
function lines(history: HistoryEvent[]): string[] {
  return history.map(
    (e) => `${e.id}<${e.previousEventId} +${at(e)} ${e.type} ${JSON.stringify(details(e))}`,
  );
}

async function run(definition: StateMachineDefinition, input: Json) {
  const r = await execute(definition, { input });
  // The journal (ResultsCollected included) replays to the same runs and history.
  const rebuilt = replay(compileProgram(definition), r.execution, r.journal);
  expect(rebuilt.history).toEqual(r.history);
  expect(rebuilt.runs).toEqual(r.runs);
  return r;
}

describe("Map join: tolerated failures in a MaxConcurrency window", () => {
  it("ToleratedFailureCount: failures and successes interleave, the Map succeeds with nulls", async () => {
    const r = await run(
      {
        StartAt: "M",
        States: {
          M: {
            Type: "Map",
            ItemsPath: "$.items",
            MaxConcurrency: 2,
            ToleratedFailureCount: 2,
            ItemProcessor: slowFail,
            ResultSelector: { "all.$": "$", "n.$": "States.ArrayLength($)" },
            ResultPath: "$.out",
            End: true,
          },
        },
      },
      {
        items: [
          { s: 2, v: "a" },
          { s: 1, fail: true },
          { s: 1, v: "c" },
          { s: 3, v: "d" },
          { s: 0, fail: true },
          { s: 1, v: "f" },
        ],
      },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect((r.output as { out: Json }).out).toEqual({
      all: ["a", null, "c", "d", null, "f"],
      n: 6,
    });
    expect(lines(r.history)).toMatchInlineSnapshot(`
      [
        "1<0 +0 ExecutionStarted {"input":"{\\"items\\":[{\\"s\\":2,\\"v\\":\\"a\\"},{\\"s\\":1,\\"fail\\":true},{\\"s\\":1,\\"v\\":\\"c\\"},{\\"s\\":3,\\"v\\":\\"d\\"},{\\"s\\":0,\\"fail\\":true},{\\"s\\":1,\\"v\\":\\"f\\"}]}","roleArn":"arn:aws:iam::000000000000:role/stepwise"}",
        "2<0 +0 MapStateEntered {"name":"M","input":"{\\"items\\":[{\\"s\\":2,\\"v\\":\\"a\\"},{\\"s\\":1,\\"fail\\":true},{\\"s\\":1,\\"v\\":\\"c\\"},{\\"s\\":3,\\"v\\":\\"d\\"},{\\"s\\":0,\\"fail\\":true},{\\"s\\":1,\\"v\\":\\"f\\"}]}"}",
        "3<2 +0 MapStateStarted {"length":6}",
        "4<3 +0 MapIterationStarted {"name":"M","index":0}",
        "5<4 +0 MapIterationStarted {"name":"M","index":1}",
        "6<4 +0 WaitStateEntered {"name":"W","input":"{\\"s\\":2,\\"v\\":\\"a\\"}"}",
        "7<5 +0 WaitStateEntered {"name":"W","input":"{\\"s\\":1,\\"fail\\":true}"}",
        "8<7 +1000 WaitStateExited {"name":"W","output":"{\\"s\\":1,\\"fail\\":true}"}",
        "9<8 +1000 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":1,\\"fail\\":true}"}",
        "10<9 +1000 ChoiceStateExited {"name":"Check","output":"{\\"s\\":1,\\"fail\\":true}"}",
        "11<10 +1000 FailStateEntered {"name":"Boom","input":"{\\"s\\":1,\\"fail\\":true}"}",
        "12<11 +1000 MapIterationFailed {"name":"M","index":1}",
        "13<11 +1000 MapIterationStarted {"name":"M","index":2}",
        "14<13 +1000 WaitStateEntered {"name":"W","input":"{\\"s\\":1,\\"v\\":\\"c\\"}"}",
        "15<6 +2000 WaitStateExited {"name":"W","output":"{\\"s\\":2,\\"v\\":\\"a\\"}"}",
        "16<15 +2000 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":2,\\"v\\":\\"a\\"}"}",
        "17<16 +2000 ChoiceStateExited {"name":"Check","output":"{\\"s\\":2,\\"v\\":\\"a\\"}"}",
        "18<17 +2000 PassStateEntered {"name":"Out","input":"{\\"s\\":2,\\"v\\":\\"a\\"}"}",
        "19<18 +2000 PassStateExited {"name":"Out","output":"\\"a\\""}",
        "20<19 +2000 MapIterationSucceeded {"name":"M","index":0}",
        "21<19 +2000 MapIterationStarted {"name":"M","index":3}",
        "22<21 +2000 WaitStateEntered {"name":"W","input":"{\\"s\\":3,\\"v\\":\\"d\\"}"}",
        "23<14 +2000 WaitStateExited {"name":"W","output":"{\\"s\\":1,\\"v\\":\\"c\\"}"}",
        "24<23 +2000 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":1,\\"v\\":\\"c\\"}"}",
        "25<24 +2000 ChoiceStateExited {"name":"Check","output":"{\\"s\\":1,\\"v\\":\\"c\\"}"}",
        "26<25 +2000 PassStateEntered {"name":"Out","input":"{\\"s\\":1,\\"v\\":\\"c\\"}"}",
        "27<26 +2000 PassStateExited {"name":"Out","output":"\\"c\\""}",
        "28<27 +2000 MapIterationSucceeded {"name":"M","index":2}",
        "29<27 +2000 MapIterationStarted {"name":"M","index":4}",
        "30<29 +2000 WaitStateEntered {"name":"W","input":"{\\"s\\":0,\\"fail\\":true}"}",
        "31<30 +2000 WaitStateExited {"name":"W","output":"{\\"s\\":0,\\"fail\\":true}"}",
        "32<31 +2000 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":0,\\"fail\\":true}"}",
        "33<32 +2000 ChoiceStateExited {"name":"Check","output":"{\\"s\\":0,\\"fail\\":true}"}",
        "34<33 +2000 FailStateEntered {"name":"Boom","input":"{\\"s\\":0,\\"fail\\":true}"}",
        "35<34 +2000 MapIterationFailed {"name":"M","index":4}",
        "36<34 +2000 MapIterationStarted {"name":"M","index":5}",
        "37<36 +2000 WaitStateEntered {"name":"W","input":"{\\"s\\":1,\\"v\\":\\"f\\"}"}",
        "38<37 +3000 WaitStateExited {"name":"W","output":"{\\"s\\":1,\\"v\\":\\"f\\"}"}",
        "39<38 +3000 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":1,\\"v\\":\\"f\\"}"}",
        "40<39 +3000 ChoiceStateExited {"name":"Check","output":"{\\"s\\":1,\\"v\\":\\"f\\"}"}",
        "41<40 +3000 PassStateEntered {"name":"Out","input":"{\\"s\\":1,\\"v\\":\\"f\\"}"}",
        "42<41 +3000 PassStateExited {"name":"Out","output":"\\"f\\""}",
        "43<42 +3000 MapIterationSucceeded {"name":"M","index":5}",
        "44<22 +5000 WaitStateExited {"name":"W","output":"{\\"s\\":3,\\"v\\":\\"d\\"}"}",
        "45<44 +5000 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":3,\\"v\\":\\"d\\"}"}",
        "46<45 +5000 ChoiceStateExited {"name":"Check","output":"{\\"s\\":3,\\"v\\":\\"d\\"}"}",
        "47<46 +5000 PassStateEntered {"name":"Out","input":"{\\"s\\":3,\\"v\\":\\"d\\"}"}",
        "48<47 +5000 PassStateExited {"name":"Out","output":"\\"d\\""}",
        "49<48 +5000 MapIterationSucceeded {"name":"M","index":3}",
        "50<49 +5000 MapStateSucceeded {}",
        "51<49 +5000 MapStateExited {"name":"M","output":"{\\"items\\":[{\\"s\\":2,\\"v\\":\\"a\\"},{\\"s\\":1,\\"fail\\":true},{\\"s\\":1,\\"v\\":\\"c\\"},{\\"s\\":3,\\"v\\":\\"d\\"},{\\"s\\":0,\\"fail\\":true},{\\"s\\":1,\\"v\\":\\"f\\"}],\\"out\\":{\\"all\\":[\\"a\\",null,\\"c\\",\\"d\\",null,\\"f\\"],\\"n\\":6}}"}",
        "52<51 +5000 ExecutionSucceeded {"output":"{\\"items\\":[{\\"s\\":2,\\"v\\":\\"a\\"},{\\"s\\":1,\\"fail\\":true},{\\"s\\":1,\\"v\\":\\"c\\"},{\\"s\\":3,\\"v\\":\\"d\\"},{\\"s\\":0,\\"fail\\":true},{\\"s\\":1,\\"v\\":\\"f\\"}],\\"out\\":{\\"all\\":[\\"a\\",null,\\"c\\",\\"d\\",null,\\"f\\"],\\"n\\":6}}"}",
      ]
    `);
  });

  it("ToleratedFailurePercentage exceeded mid-window: the Map fails, running items abort", async () => {
    const r = await run(
      {
        StartAt: "M",
        States: {
          M: {
            Type: "Map",
            MaxConcurrency: 3,
            ToleratedFailurePercentage: 25,
            ItemProcessor: timed,
            Catch: [{ ErrorEquals: ["States.ALL"], Next: "After" }],
            End: true,
          },
          After: { Type: "Wait", Seconds: 100, End: true },
        },
      },
      [
        { s: 1, v: 0 },
        { fail: true },
        { s: 5, v: 2 },
        { s: 0, v: 3 },
        { fail: true },
        { s: 9, v: 5 },
        { fail: true },
        { s: 1, v: 7 },
        { s: 1, v: 8 },
        { s: 1, v: 9 },
      ],
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual({
      Error: "States.ExceedToleratedFailureThreshold",
      Cause: "The specified tolerated failure threshold was exceeded",
    });
    expect(lines(r.history)).toMatchInlineSnapshot(`
      [
        "1<0 +0 ExecutionStarted {"input":"[{\\"s\\":1,\\"v\\":0},{\\"fail\\":true},{\\"s\\":5,\\"v\\":2},{\\"s\\":0,\\"v\\":3},{\\"fail\\":true},{\\"s\\":9,\\"v\\":5},{\\"fail\\":true},{\\"s\\":1,\\"v\\":7},{\\"s\\":1,\\"v\\":8},{\\"s\\":1,\\"v\\":9}]","roleArn":"arn:aws:iam::000000000000:role/stepwise"}",
        "2<0 +0 MapStateEntered {"name":"M","input":"[{\\"s\\":1,\\"v\\":0},{\\"fail\\":true},{\\"s\\":5,\\"v\\":2},{\\"s\\":0,\\"v\\":3},{\\"fail\\":true},{\\"s\\":9,\\"v\\":5},{\\"fail\\":true},{\\"s\\":1,\\"v\\":7},{\\"s\\":1,\\"v\\":8},{\\"s\\":1,\\"v\\":9}]"}",
        "3<2 +0 MapStateStarted {"length":10}",
        "4<3 +0 MapIterationStarted {"name":"M","index":0}",
        "5<4 +0 MapIterationStarted {"name":"M","index":1}",
        "6<5 +0 MapIterationStarted {"name":"M","index":2}",
        "7<4 +0 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":1,\\"v\\":0}"}",
        "8<5 +0 ChoiceStateEntered {"name":"Check","input":"{\\"fail\\":true}"}",
        "9<6 +0 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":5,\\"v\\":2}"}",
        "10<7 +0 ChoiceStateExited {"name":"Check","output":"{\\"s\\":1,\\"v\\":0}"}",
        "11<10 +0 WaitStateEntered {"name":"W","input":"{\\"s\\":1,\\"v\\":0}"}",
        "12<8 +0 ChoiceStateExited {"name":"Check","output":"{\\"fail\\":true}"}",
        "13<12 +0 FailStateEntered {"name":"Boom","input":"{\\"fail\\":true}"}",
        "14<9 +0 ChoiceStateExited {"name":"Check","output":"{\\"s\\":5,\\"v\\":2}"}",
        "15<14 +0 WaitStateEntered {"name":"W","input":"{\\"s\\":5,\\"v\\":2}"}",
        "16<13 +0 MapIterationFailed {"name":"M","index":1}",
        "17<13 +0 MapIterationStarted {"name":"M","index":3}",
        "18<17 +0 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":0,\\"v\\":3}"}",
        "19<18 +0 ChoiceStateExited {"name":"Check","output":"{\\"s\\":0,\\"v\\":3}"}",
        "20<19 +0 WaitStateEntered {"name":"W","input":"{\\"s\\":0,\\"v\\":3}"}",
        "21<20 +0 WaitStateExited {"name":"W","output":"{\\"s\\":0,\\"v\\":3}"}",
        "22<21 +0 PassStateEntered {"name":"Out","input":"{\\"s\\":0,\\"v\\":3}"}",
        "23<22 +0 PassStateExited {"name":"Out","output":"3"}",
        "24<23 +0 MapIterationSucceeded {"name":"M","index":3}",
        "25<23 +0 MapIterationStarted {"name":"M","index":4}",
        "26<25 +0 ChoiceStateEntered {"name":"Check","input":"{\\"fail\\":true}"}",
        "27<26 +0 ChoiceStateExited {"name":"Check","output":"{\\"fail\\":true}"}",
        "28<27 +0 FailStateEntered {"name":"Boom","input":"{\\"fail\\":true}"}",
        "29<28 +0 MapIterationFailed {"name":"M","index":4}",
        "30<28 +0 MapIterationStarted {"name":"M","index":5}",
        "31<30 +0 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":9,\\"v\\":5}"}",
        "32<31 +0 ChoiceStateExited {"name":"Check","output":"{\\"s\\":9,\\"v\\":5}"}",
        "33<32 +0 WaitStateEntered {"name":"W","input":"{\\"s\\":9,\\"v\\":5}"}",
        "34<11 +1000 WaitStateExited {"name":"W","output":"{\\"s\\":1,\\"v\\":0}"}",
        "35<34 +1000 PassStateEntered {"name":"Out","input":"{\\"s\\":1,\\"v\\":0}"}",
        "36<35 +1000 PassStateExited {"name":"Out","output":"0"}",
        "37<36 +1000 MapIterationSucceeded {"name":"M","index":0}",
        "38<36 +1000 MapIterationStarted {"name":"M","index":6}",
        "39<38 +1000 ChoiceStateEntered {"name":"Check","input":"{\\"fail\\":true}"}",
        "40<39 +1000 ChoiceStateExited {"name":"Check","output":"{\\"fail\\":true}"}",
        "41<40 +1000 FailStateEntered {"name":"Boom","input":"{\\"fail\\":true}"}",
        "42<41 +1000 MapIterationFailed {"name":"M","index":6}",
        "43<41 +1000 MapStateFailed {"error":"States.ExceedToleratedFailureThreshold","cause":"The specified tolerated failure threshold was exceeded"}",
        "44<43 +1000 MapStateExited {"name":"M","output":"{\\"Error\\":\\"States.ExceedToleratedFailureThreshold\\",\\"Cause\\":\\"The specified tolerated failure threshold was exceeded\\"}"}",
        "45<44 +1000 WaitStateEntered {"name":"After","input":"{\\"Error\\":\\"States.ExceedToleratedFailureThreshold\\",\\"Cause\\":\\"The specified tolerated failure threshold was exceeded\\"}"}",
        "46<33 +1000 MapIterationAborted {"name":"M","index":5}",
        "47<15 +1000 MapIterationAborted {"name":"M","index":2}",
        "48<45 +101000 WaitStateExited {"name":"After","output":"{\\"Error\\":\\"States.ExceedToleratedFailureThreshold\\",\\"Cause\\":\\"The specified tolerated failure threshold was exceeded\\"}"}",
        "49<48 +101000 ExecutionSucceeded {"output":"{\\"Error\\":\\"States.ExceedToleratedFailureThreshold\\",\\"Cause\\":\\"The specified tolerated failure threshold was exceeded\\"}"}",
      ]
    `);
  });

  it("a Map inside a Parallel finishes in the same order relative to its sibling branch", async () => {
    const r = await run(
      {
        StartAt: "P",
        States: {
          P: {
            Type: "Parallel",
            Branches: [
              {
                StartAt: "M",
                States: {
                  M: {
                    Type: "Map",
                    MaxConcurrency: 2,
                    ToleratedFailurePercentage: 50,
                    ItemProcessor: timed,
                    End: true,
                  },
                },
              },
              {
                StartAt: "W1",
                States: {
                  W1: { Type: "Wait", Seconds: 1, Next: "W2" },
                  W2: { Type: "Wait", Seconds: 1, Next: "Done" },
                  Done: { Type: "Pass", Result: "side", End: true },
                },
              },
            ],
            End: true,
          },
        },
      },
      [{ s: 1, v: 0 }, { fail: true }, { s: 1, v: 2 }, { s: 0, v: 3 }],
    );
    expect(r.output).toEqual([[0, null, 2, 3], "side"]);
    expect(lines(r.history)).toMatchInlineSnapshot(`
      [
        "1<0 +0 ExecutionStarted {"input":"[{\\"s\\":1,\\"v\\":0},{\\"fail\\":true},{\\"s\\":1,\\"v\\":2},{\\"s\\":0,\\"v\\":3}]","roleArn":"arn:aws:iam::000000000000:role/stepwise"}",
        "2<0 +0 ParallelStateEntered {"name":"P","input":"[{\\"s\\":1,\\"v\\":0},{\\"fail\\":true},{\\"s\\":1,\\"v\\":2},{\\"s\\":0,\\"v\\":3}]"}",
        "3<2 +0 ParallelStateStarted {}",
        "4<3 +0 MapStateEntered {"name":"M","input":"[{\\"s\\":1,\\"v\\":0},{\\"fail\\":true},{\\"s\\":1,\\"v\\":2},{\\"s\\":0,\\"v\\":3}]"}",
        "5<3 +0 WaitStateEntered {"name":"W1","input":"[{\\"s\\":1,\\"v\\":0},{\\"fail\\":true},{\\"s\\":1,\\"v\\":2},{\\"s\\":0,\\"v\\":3}]"}",
        "6<4 +0 MapStateStarted {"length":4}",
        "7<6 +0 MapIterationStarted {"name":"M","index":0}",
        "8<7 +0 MapIterationStarted {"name":"M","index":1}",
        "9<7 +0 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":1,\\"v\\":0}"}",
        "10<8 +0 ChoiceStateEntered {"name":"Check","input":"{\\"fail\\":true}"}",
        "11<9 +0 ChoiceStateExited {"name":"Check","output":"{\\"s\\":1,\\"v\\":0}"}",
        "12<11 +0 WaitStateEntered {"name":"W","input":"{\\"s\\":1,\\"v\\":0}"}",
        "13<10 +0 ChoiceStateExited {"name":"Check","output":"{\\"fail\\":true}"}",
        "14<13 +0 FailStateEntered {"name":"Boom","input":"{\\"fail\\":true}"}",
        "15<14 +0 MapIterationFailed {"name":"M","index":1}",
        "16<14 +0 MapIterationStarted {"name":"M","index":2}",
        "17<16 +0 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":1,\\"v\\":2}"}",
        "18<17 +0 ChoiceStateExited {"name":"Check","output":"{\\"s\\":1,\\"v\\":2}"}",
        "19<18 +0 WaitStateEntered {"name":"W","input":"{\\"s\\":1,\\"v\\":2}"}",
        "20<5 +1000 WaitStateExited {"name":"W1","output":"[{\\"s\\":1,\\"v\\":0},{\\"fail\\":true},{\\"s\\":1,\\"v\\":2},{\\"s\\":0,\\"v\\":3}]"}",
        "21<20 +1000 WaitStateEntered {"name":"W2","input":"[{\\"s\\":1,\\"v\\":0},{\\"fail\\":true},{\\"s\\":1,\\"v\\":2},{\\"s\\":0,\\"v\\":3}]"}",
        "22<12 +1000 WaitStateExited {"name":"W","output":"{\\"s\\":1,\\"v\\":0}"}",
        "23<22 +1000 PassStateEntered {"name":"Out","input":"{\\"s\\":1,\\"v\\":0}"}",
        "24<23 +1000 PassStateExited {"name":"Out","output":"0"}",
        "25<24 +1000 MapIterationSucceeded {"name":"M","index":0}",
        "26<24 +1000 MapIterationStarted {"name":"M","index":3}",
        "27<26 +1000 ChoiceStateEntered {"name":"Check","input":"{\\"s\\":0,\\"v\\":3}"}",
        "28<27 +1000 ChoiceStateExited {"name":"Check","output":"{\\"s\\":0,\\"v\\":3}"}",
        "29<28 +1000 WaitStateEntered {"name":"W","input":"{\\"s\\":0,\\"v\\":3}"}",
        "30<19 +1000 WaitStateExited {"name":"W","output":"{\\"s\\":1,\\"v\\":2}"}",
        "31<30 +1000 PassStateEntered {"name":"Out","input":"{\\"s\\":1,\\"v\\":2}"}",
        "32<31 +1000 PassStateExited {"name":"Out","output":"2"}",
        "33<32 +1000 MapIterationSucceeded {"name":"M","index":2}",
        "34<29 +1000 WaitStateExited {"name":"W","output":"{\\"s\\":0,\\"v\\":3}"}",
        "35<34 +1000 PassStateEntered {"name":"Out","input":"{\\"s\\":0,\\"v\\":3}"}",
        "36<35 +1000 PassStateExited {"name":"Out","output":"3"}",
        "37<36 +1000 MapIterationSucceeded {"name":"M","index":3}",
        "38<37 +1000 MapStateSucceeded {}",
        "39<37 +1000 MapStateExited {"name":"M","output":"[0,null,2,3]"}",
        "40<21 +2000 WaitStateExited {"name":"W2","output":"[{\\"s\\":1,\\"v\\":0},{\\"fail\\":true},{\\"s\\":1,\\"v\\":2},{\\"s\\":0,\\"v\\":3}]"}",
        "41<40 +2000 PassStateEntered {"name":"Done","input":"[{\\"s\\":1,\\"v\\":0},{\\"fail\\":true},{\\"s\\":1,\\"v\\":2},{\\"s\\":0,\\"v\\":3}]"}",
        "42<41 +2000 PassStateExited {"name":"Done","output":"\\"side\\""}",
        "43<42 +2000 ParallelStateSucceeded {}",
        "44<42 +2000 ParallelStateExited {"name":"P","output":"[[0,null,2,3],\\"side\\"]"}",
        "45<44 +2000 ExecutionSucceeded {"output":"[[0,null,2,3],\\"side\\"]"}",
      ]
    `);
  });
});

describe("a child stopped before it started", () => {
  it("ends ABORTED at once and ignores its Started event: it never runs", () => {
    const s = new Stepper(
      single({
        Type: "Map",
        ItemProcessor: {
          StartAt: "T",
          States: { T: { Type: "Task", Resource: "work", End: true } },
        },
        End: true,
      }),
      [1, 2],
    );
    // Only the root's own steps: the children are created, their Started not delivered.
    s.deliver(s.rootId, { type: "Started", input: [1, 2] });
    const entered = s.deliver(s.rootId, { type: "Continue" });
    const spawned = only(effectsOf(entered.effects, "SpawnChildren"));
    const child = spawned.children[1]!;
    const stopped = s.deliver(child.runId, { type: "Stop" });
    expect(stopped.run.status).toBe("ABORTED");
    expect(types(stopped.history)).toEqual(["MapIterationAborted"]);
    expect(effectsOf(stopped.effects, "RunEnded")).toHaveLength(1);
    const late = s.deliver(child.runId, { type: "Started", input: 2 });
    expect(late.run.status).toBe("ABORTED");
    expect(late.history).toEqual([]);
    expect(effectsOf(late.effects, "RunTask")).toEqual([]);
  });
});
