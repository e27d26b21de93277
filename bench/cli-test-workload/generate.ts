/**
 * Writes cases.jsonl: the 60 `stepwise test` cases of bench/cli-start.ts, over the
 * three machines beside it (order: Choice, Pass, Task with Retry/Catch, Fail; batch:
 * a Map whose items go through a Choice and a retried, caught Task; claims: Parallel,
 * Choice with And and a Path comparison, Wait, Retry/Catch). Each scenario states its
 * expected result by hand, so a case checks the engine rather than echoing it; the
 * anchor (aws-local-stepfunctions) must agree on every one, which the bench checks.
 *
 *   npx tsx bench/cli-test-workload/generate.ts
 *
 * Deterministic: the same file each time, so it is kept in the repository.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Mock = { Return: Json } | { Throw: { Error: string; Cause?: string } };
interface Case {
  id: string;
  definition: string;
  input: Json;
  mocks: Record<string, Mock[]>;
  expect: { status: "SUCCEEDED"; output: Json } | { status: "FAILED"; error: string };
}

const ok = (value: Json): Mock => ({ Return: value });
const fail = (error: string, cause = `${error} (mocked)`): Mock => ({
  Throw: { Error: error, Cause: cause },
});
const times = (n: number, mock: Mock): Mock[] => Array.from({ length: n }, () => mock);

function orderCases(): Case[] {
  const scenarios = [
    "placed",
    "placed after two throttles",
    "declined",
    "throttled four times",
    "shipment retried once",
    "shipment fails and is refunded",
    "large order approved",
    "large order rejected",
    "zero total",
  ] as const;
  const cases: Case[] = [];
  for (let n = 0; n < 27; n++) {
    const scenario = scenarios[n % scenarios.length]!;
    const large = scenario.startsWith("large");
    const items = Array.from({ length: 1 + (n % 4) }, (_, i) => `SKU-${n}-${i}`);
    const total = scenario === "zero total" ? 0 : large ? 1500 + n : 20 + n * 7;
    const order = { id: `O-${n}`, customer: `C-${n % 5}`, total, items };
    const paymentId = `pay-${n}`;
    const tracking = `TRK-${n}`;
    const charge = ok({ paymentId, status: "captured", amount: order.total });
    const ship = ok({ tracking, carrier: "DHL" });
    const placed: Json = {
      status: "PLACED",
      orderId: order.id,
      label: `order ${order.id} for ${order.customer}`,
      itemCount: items.length,
      paymentId,
      tracking,
    };
    const base = { id: `order #${n}: ${scenario}`, definition: "order.asl.json", input: { order } };
    switch (scenario) {
      case "placed":
        cases.push({
          ...base,
          mocks: { Charge: [charge], Ship: [ship] },
          expect: { status: "SUCCEEDED", output: placed },
        });
        break;
      case "placed after two throttles":
        cases.push({
          ...base,
          mocks: { Charge: [...times(2, fail("Payment.Throttled")), charge], Ship: [ship] },
          expect: { status: "SUCCEEDED", output: placed },
        });
        break;
      case "declined":
        cases.push({
          ...base,
          mocks: { Charge: [fail("Payment.Declined", "insufficient funds")] },
          expect: {
            status: "SUCCEEDED",
            output: { status: "DECLINED", orderId: order.id, reason: "insufficient funds" },
          },
        });
        break;
      case "throttled four times":
        cases.push({
          ...base,
          mocks: { Charge: times(4, fail("Payment.Throttled")) },
          expect: { status: "FAILED", error: "Payment.Throttled" },
        });
        break;
      case "shipment retried once":
        cases.push({
          ...base,
          mocks: { Charge: [charge], Ship: [fail("Carrier.Busy"), ship] },
          expect: { status: "SUCCEEDED", output: placed },
        });
        break;
      case "shipment fails and is refunded":
        cases.push({
          ...base,
          mocks: {
            Charge: [charge],
            Ship: times(3, fail("Carrier.Down")),
            Refund: [ok({ refunded: true })],
          },
          expect: { status: "FAILED", error: "ShipmentFailed" },
        });
        break;
      case "large order approved":
        cases.push({
          ...base,
          mocks: {
            ManualReview: [ok({ approved: true, reviewer: "ana" })],
            Charge: [charge],
            Ship: [ship],
          },
          expect: { status: "SUCCEEDED", output: placed },
        });
        break;
      case "large order rejected":
        cases.push({
          ...base,
          mocks: { ManualReview: [ok({ approved: false, reviewer: "ben" })] },
          expect: { status: "FAILED", error: "ReviewRejected" },
        });
        break;
      case "zero total":
        cases.push({ ...base, mocks: {}, expect: { status: "FAILED", error: "InvalidOrder" } });
        break;
    }
  }
  return cases;
}

/** Per record: what its Transform calls return, and the entry it leaves in the results. */
type RecordPlan = "skip" | "ok" | "transient then ok" | "bad" | "transient thrice";

function batchCases(): Case[] {
  const plans: RecordPlan[] = [
    "ok",
    "skip",
    "transient then ok",
    "ok",
    "bad",
    "transient thrice",
    "ok",
  ];
  const cases: Case[] = [];
  for (let n = 0; n < 15; n++) {
    const size = 3 + (n % 4);
    const records: Json[] = [];
    const transform: Mock[] = [];
    const results: Json[] = [];
    for (let i = 0; i < size; i++) {
      const plan = plans[(n + i * 3) % plans.length]!;
      const id = `r-${n}-${i}`;
      records.push({ id, kind: plan === "skip" ? "skip" : "data", payload: { n, i } });
      const value = n * 100 + i;
      if (plan === "skip") results.push({ id, status: "skipped" });
      else if (plan === "ok" || plan === "transient then ok") {
        if (plan === "transient then ok") transform.push(fail("Transient.Error"));
        transform.push(ok({ value, took: 3 }));
        results.push({ id, status: "done", value });
      } else if (plan === "bad") {
        transform.push(fail("Record.Invalid", "payload is not a record"));
        results.push({ id, status: "failed", error: "Record.Invalid" });
      } else {
        transform.push(...times(3, fail("Transient.Error")));
        results.push({ id, status: "failed", error: "Transient.Error" });
      }
    }
    const batchId = `B-${n}`;
    cases.push({
      id: `batch #${n}: ${size} records`,
      definition: "batch.asl.json",
      input: { batchId, source: "s3://bucket/in", records },
      mocks: transform.length > 0 ? { Transform: transform } : {},
      expect: { status: "SUCCEEDED", output: { batchId, count: size, results } },
    });
  }
  return cases;
}

function claimCases(): Case[] {
  const scenarios = [
    "paid",
    "policy inactive",
    "over the limit, reviewer approves",
    "suspected fraud, reviewer denies",
    "fraud scoring down, reviewer approves",
    "flaky history service",
  ] as const;
  const cases: Case[] = [];
  for (let n = 0; n < 18; n++) {
    const scenario = scenarios[n % scenarios.length]!;
    const claim = {
      id: `CL-${n}`,
      policyId: `P-${n % 7}`,
      customerId: `C-${n % 5}`,
      amount: 200 + n * 50,
    };
    const policy = ok({
      active: scenario !== "policy inactive",
      limit: scenario.startsWith("over") ? 100 : 5000,
    });
    const history = ok({ priorClaims: n % 3, since: "2020-01-01" });
    const pay = ok({ ref: `PAY-${n}` });
    const approved: Json = {
      claimId: claim.id,
      status: "APPROVED",
      paid: claim.amount,
      paymentRef: `PAY-${n}`,
    };
    const base = {
      id: `claim #${n}: ${scenario}`,
      definition: "claims.asl.json",
      input: { claim },
    };
    const enrich = { FetchPolicy: [policy], FetchHistory: [history] };
    switch (scenario) {
      case "paid":
        cases.push({
          ...base,
          mocks: { ...enrich, ScoreFraud: [ok({ score: 12 })], Pay: [pay] },
          expect: { status: "SUCCEEDED", output: approved },
        });
        break;
      case "policy inactive":
        cases.push({
          ...base,
          mocks: enrich,
          expect: { status: "FAILED", error: "PolicyInactive" },
        });
        break;
      case "over the limit, reviewer approves":
        cases.push({
          ...base,
          mocks: { ...enrich, Review: [ok({ decision: "approve" })], Pay: [pay] },
          expect: { status: "SUCCEEDED", output: approved },
        });
        break;
      case "suspected fraud, reviewer denies":
        cases.push({
          ...base,
          mocks: { ...enrich, ScoreFraud: [ok({ score: 91 })], Review: [ok({ decision: "deny" })] },
          expect: { status: "FAILED", error: "ClaimDenied" },
        });
        break;
      case "fraud scoring down, reviewer approves":
        cases.push({
          ...base,
          mocks: {
            ...enrich,
            ScoreFraud: times(3, fail("Fraud.Unavailable")),
            Review: [ok({ decision: "approve" })],
            Pay: [pay],
          },
          expect: { status: "SUCCEEDED", output: approved },
        });
        break;
      case "flaky history service":
        cases.push({
          ...base,
          mocks: {
            FetchPolicy: [policy],
            FetchHistory: [fail("States.TaskFailed", "connection reset"), history],
            ScoreFraud: [ok({ score: 5 })],
            Pay: [pay],
          },
          expect: { status: "SUCCEEDED", output: approved },
        });
        break;
    }
  }
  return cases;
}

const cases = [...orderCases(), ...batchCases(), ...claimCases()];
if (cases.length !== 60) throw new Error(`expected 60 cases, made ${cases.length}`);
writeFileSync(
  join(import.meta.dirname, "cases.jsonl"),
  cases.map((c) => JSON.stringify(c)).join("\n") + "\n",
);
console.log(`wrote ${cases.length} cases`);
