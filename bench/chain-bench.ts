// CPU cost of the history hash chain (runtime/audit/chain.ts) per history event,
// next to what a transition costs anyway. Run: npx tsx bench/chain-bench.ts
// (Redis throughput with and without the chain: bench/redis-bench.ts throughput.)
import type { HistoryEvent } from "../engine/core/history.js";
import { chainEvents } from "../runtime/audit/chain.js";
import { pack } from "../runtime/store/codec.js";

const ARN = "arn:aws:states:local:000000000000:execution:bench:x";
// A Pass state's two events, as the engine writes them (the throughput bench's chain).
function passEvents(i: number): HistoryEvent[] {
  const at = new Date(1_700_000_000_000 + i).toISOString();
  return [
    {
      id: 2 * i + 1,
      previousEventId: 2 * i,
      timestamp: at,
      type: "PassStateEntered",
      stateEnteredEventDetails: { name: `S${i}`, input: `{"n":${i},"id":"${ARN}"}` },
    },
    {
      id: 2 * i + 2,
      previousEventId: 2 * i + 1,
      timestamp: at,
      type: "PassStateExited",
      stateExitedEventDetails: { name: `S${i}`, output: `{"n":${i},"id":"${ARN}"}` },
    },
  ];
}

const N = 50_000;
const batches = Array.from({ length: N }, (_, i) => passEvents(i));

function time(label: string, fn: (events: HistoryEvent[]) => void): number {
  for (let i = 0; i < 2000; i++) fn(batches[i]!); // warm up
  const start = process.hrtime.bigint();
  for (const events of batches) fn(events);
  const us = Number(process.hrtime.bigint() - start) / 1000 / N;
  console.log(`${label}: ${us.toFixed(2)} µs per Pass transition (2 events)`);
  return us;
}

const plain = time("store without the chain (stringify + pack)", (events) => {
  for (const e of events) pack(JSON.stringify(e));
});
let head = "0".repeat(64);
const chained = time("store with the chain (hash + stringify + pack)", (events) => {
  const out = chainEvents(head, events);
  head = out.head;
  for (const s of out.stored) pack(s);
});
console.log(`the chain adds ${(chained - plain).toFixed(2)} µs of CPU per Pass transition`);
