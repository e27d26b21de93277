// Cost and effect of the storage codec (runtime/store/codec.ts). Run: npx tsx bench/codec.ts
import { pack, unpack } from "../runtime/store/codec.js";

const samples: Record<string, string> = {
  "run state": `{"runId":"arn:aws:states:local:000000000000:execution:park:p1","scope":"","status":"RUNNING","variables":{},"random":0,"lastEventId":3,"serial":1,"current":{"name":"Approve","input":{"order":"o-1"},"enteredTime":"2026-12-01T03:05:43.482Z","enteredEventId":2,"phase":{"kind":"task","taskId":"arn:aws:states:local:000000000000:execution:park:p1#1","timerIds":[],"token":"O93tLJLf2XOIhncQCmffYg"}}}`,
  "history event": `{"id":3,"previousEventId":2,"timestamp":"2026-12-01T03:05:43.486Z","type":"TaskScheduled","taskScheduledEventDetails":{"resourceType":"stepwise","resource":"approval.waitForTaskToken","region":"local","parameters":"{\\"token\\":\\"O93tLJLf2XOIhncQCmffYg\\",\\"order\\":\\"o-1\\"}"}}`,
  "journal entry": `{"runId":"arn:aws:states:local:000000000000:execution:park:p1","event":{"type":"Continue","time":"2026-12-01T03:05:43.486Z","nonce":"O93tLJLf2XOIhncQCmffYg","eventId":3}}`,
};
const N = 200_000;
for (const [name, text] of Object.entries(samples)) {
  const packed = pack(text);
  let t = performance.now();
  for (let i = 0; i < N; i++) pack(text);
  const p = ((performance.now() - t) / N) * 1000;
  t = performance.now();
  for (let i = 0; i < N; i++) unpack(packed);
  const u = ((performance.now() - t) / N) * 1000;
  console.log(
    `${name}: ${text.length} → ${Buffer.byteLength(packed)} bytes; pack ${p.toFixed(2)} µs, unpack ${u.toFixed(2)} µs`,
  );
}
