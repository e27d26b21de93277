import { deflateRawSync, inflateRawSync } from "node:zlib";

/**
 * How run states, history events and journal entries are stored in Redis.
 *
 * A parked execution (an approval that waits for days) costs only what it
 * stores, and its JSON is mostly the same few hundred bytes of AWS key names,
 * ARNs and event types. Raw deflate with a preset dictionary of exactly those
 * fragments shrinks a typical value to a third (a 395-byte run state to about
 * 110 bytes) for ~10 µs to pack and ~4 µs to unpack; without the dictionary
 * deflate barely pays on values this small.
 *
 * Format: one version byte, then the payload. Lua scripts never look inside
 * these values (they only store, move and compare them), so the format is the
 * TypeScript side's business alone. A value that starts with `{` is plain JSON
 * (what this runtime wrote before packing existed), read as is.
 *
 * The dictionary is part of the stored format: changing it would make every
 * stored value unreadable. A better dictionary gets a new version byte, and
 * `unpack` keeps reading the old ones.
 */
const V1 = 0x01;

const ARN = "arn:aws:states:local:000000000000:execution:";

// Least frequent first: deflate reaches the end of its window most cheaply.
const DICTIONARY_V1 = Buffer.from(
  [
    `"mapIterationStartedEventDetails":{"name":"`,
    `"mapIterationSucceededEventDetails":{"name":"`,
    `"mapStateStartedEventDetails":{"length":`,
    `"evaluationFailedEventDetails":{"error":"`,
    `"executionFailedEventDetails":{"error":"`,
    `"executionAbortedEventDetails":{"error":"`,
    `"taskFailedEventDetails":{"resourceType":"`,
    `"taskTimedOutEventDetails":{"resourceType":"`,
    `"type":"ChildEnded","childRunId":"${ARN}`,
    `"outcome":{"status":"SUCCEEDED","output":`,
    `"type":"TimerFired","timerId":"${ARN}`,
    `"kind":"wait","timerId":"`,
    `"kind":"join","join":{"prefix":"`,
    `"type":"MapStateStarted"`,
    `"type":"MapIterationStarted"`,
    `"type":"MapStateSucceeded"`,
    `"type":"ParallelStateStarted"`,
    `"type":"ParallelStateSucceeded"`,
    `"type":"WaitStateEntered"`,
    `"type":"WaitStateExited"`,
    `"type":"ChoiceStateEntered"`,
    `"type":"ChoiceStateExited"`,
    `"type":"ExecutionSucceeded","executionSucceededEventDetails":{"output":"`,
    `"type":"TaskSucceeded","taskSucceededEventDetails":{"resourceType":"`,
    `"output":"{\\"`,
    `"outputDetails":{"truncated":false}`,
    `"retryCount":`,
    `"variables":{"`,
    `"parent":{"runId":"${ARN}`,
    `"type":"TaskStarted","taskStartedEventDetails":{"resourceType":"`,
    `"type":"TaskScheduled","taskScheduledEventDetails":{"resourceType":"stepwise","resource":"approval.waitForTaskToken","region":"local","parameters":"{\\"token\\":\\"`,
    `"type":"TaskScheduled","taskScheduledEventDetails":{"resourceType":"`,
    `"resource":"`,
    `"region":"local","parameters":"{\\"`,
    `"timeoutInSeconds":`,
    `"heartbeatInSeconds":`,
    `"type":"ExecutionStarted","executionStartedEventDetails":{"input":"{\\"`,
    `"roleArn":"arn:aws:iam::000000000000:role/stepwise"}}`,
    `"inputDetails":{"truncated":false}`,
    `"type":"TaskStateEntered","stateEnteredEventDetails":{"name":"`,
    `"type":"TaskStateExited","stateExitedEventDetails":{"name":"`,
    `"phase":{"kind":"task","taskId":"${ARN}`,
    `"timerIds":[],"token":"`,
    `{"runId":"${ARN}`,
    `","scope":"","status":"RUNNING","variables":{},"random":0,"lastEventId":`,
    `,"serial":`,
    `,"current":{"name":"`,
    `","input":{"`,
    `,"enteredTime":"20`,
    `,"enteredEventId":`,
    `,"phase":{"kind":"enter"}}}`,
    `{"runId":"${ARN}`,
    `","event":{"type":"Started","input":{"`,
    `","event":{"type":"Continue","time":"20`,
    `Z","nonce":"`,
    `,"eventId":`,
    `"type":"PassStateEntered","stateEnteredEventDetails":{"name":"`,
    `"type":"PassStateExited","stateExitedEventDetails":{"name":"`,
    `","input":"{\\"`,
    `","output":"{\\"`,
    `{"id":`,
    `,"previousEventId":`,
    `,"timestamp":"20`,
  ].join(""),
);

export function pack(json: string): Buffer {
  const body = deflateRawSync(json, { dictionary: DICTIONARY_V1, level: 1 });
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = V1;
  body.copy(out, 1);
  return out;
}

export function unpack(stored: Buffer | string): string {
  if (typeof stored === "string") return stored;
  if (stored[0] === V1) {
    return inflateRawSync(stored.subarray(1), { dictionary: DICTIONARY_V1 }).toString("utf8");
  }
  if (stored[0] === 0x7b /* { */) return stored.toString("utf8");
  throw new Error(`unknown stored format ${stored[0] ?? "(empty)"}`);
}
