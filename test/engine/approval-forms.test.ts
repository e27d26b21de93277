import { describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import {
  applyEdit,
  approvalRequest,
  editablePointer,
  envelopeHash,
  schemaHash,
} from "../../engine/states/approval.js";
import { applyDecision, type ApprovalRecord } from "../../runtime/approvals/approval-record.js";
import { validateDefinition } from "../../schema/index.js";

/** Human tasks (issue 40), the pure parts: forms, edits, decision kinds, static checks. */

const at = {
  executionId: "arn:aws:states:local:000000000000:execution:m:e",
  stateMachine: "m",
  stateName: "Ask",
  enteredEventId: 2,
  now: Date.parse("2026-01-01T00:00:00Z"),
  token: "tok-0123456789abcdef",
  timeoutSeconds: undefined as number | undefined,
};

const form: Json = {
  type: "object",
  required: ["reason"],
  properties: {
    reason: { enum: ["budget", "vendor", "other"] },
    note: { type: "string", maxLength: 20 },
    limit: { type: "number", minimum: 0 },
  },
  additionalProperties: false,
};

function recordOf(params: Json): ApprovalRecord {
  const { explicitExpiry: _, ...request } = approvalRequest(params, at);
  return {
    ...request,
    status: "PENDING",
    decisions: [],
  } as unknown as ApprovalRecord;
}

const who = { name: "ana", groups: "any" as const };

describe("ResponseSchema", () => {
  it("binds the form: its hash is in the envelope, and an approval without one hashes as before", () => {
    const plain = approvalRequest({ Subject: "Pay", Details: { amount: 1 } }, at);
    const withForm = approvalRequest(
      { Subject: "Pay", Details: { amount: 1 }, ResponseSchema: form },
      at,
    );
    expect(plain.responseSchemaHash).toBeUndefined();
    expect(withForm.responseSchemaHash).toBe(schemaHash(form));
    expect(withForm.envelopeHash).not.toBe(plain.envelopeHash);
    expect(envelopeHash(withForm)).toBe(withForm.envelopeHash);
    const other = approvalRequest(
      { Subject: "Pay", Details: { amount: 1 }, ResponseSchema: { type: "object" } },
      at,
    );
    expect(other.envelopeHash).not.toBe(withForm.envelopeHash);
  });

  it("fails the state with States.Runtime when the schema is not a JSON Schema", () => {
    expect(() => approvalRequest({ Subject: "x", ResponseSchema: { type: "objekt" } }, at)).toThrow(
      /'ResponseSchema' is not a valid JSON Schema/,
    );
    expect(() => approvalRequest({ Subject: "x", ResponseSchema: "text" }, at)).toThrow(
      /'ResponseSchema' must be a JSON Schema object/,
    );
  });

  it("refuses a response that fails the form, naming the field; accepts one that fits", () => {
    const record = recordOf({ Subject: "Pay", ResponseSchema: form });
    const base = { decision: "APPROVE" as const, envelopeHash: record.envelopeHash };
    const shown = { details: record.details, responseSchema: form };
    const bad = applyDecision(record, who, { ...base, response: { reason: "nope" } }, 0, shown);
    expect(bad).toMatchObject({ ok: false, error: "InvalidRequest" });
    expect(!bad.ok && bad.message).toMatch(/'\/reason'/);
    const missing = applyDecision(record, who, { ...base, response: {} }, 0, shown);
    expect(!missing.ok && missing.message).toMatch(/'\/reason'/);
    const none = applyDecision(record, who, base, 0, shown);
    expect(!none.ok && none.message).toMatch(/needs 'response'/);
    const good = applyDecision(
      record,
      who,
      { ...base, response: { reason: "budget", limit: 5 } },
      0,
      shown,
    );
    expect(good).toMatchObject({
      ok: true,
      status: "APPROVED",
      response: { reason: "budget", limit: 5 },
    });
    // REJECT may come without an answer.
    const reject = applyDecision(record, who, { ...base, decision: "REJECT" }, 0, shown);
    expect(reject).toMatchObject({ ok: true, status: "REJECTED" });
  });

  it("RESPOND answers the form and counts as an approval; it needs a form", () => {
    const record = recordOf({ Subject: "Which vendor?", ResponseSchema: form });
    const shown = { details: record.details, responseSchema: form };
    const answer = applyDecision(
      record,
      who,
      { decision: "RESPOND", envelopeHash: record.envelopeHash, response: { reason: "other" } },
      0,
      shown,
    );
    expect(answer).toMatchObject({ ok: true, status: "APPROVED" });
    const plain = recordOf({ Subject: "x" });
    const refused = applyDecision(
      plain,
      who,
      { decision: "RESPOND", envelopeHash: plain.envelopeHash, response: 1 },
      0,
    );
    expect(!refused.ok && refused.message).toMatch(/no ResponseSchema/);
  });
});

describe("Editable and EDIT", () => {
  it("reads Editable JSONPaths as JSON pointers", () => {
    expect(editablePointer("$.amount")).toBe("/amount");
    expect(editablePointer("$.payee.iban")).toBe("/payee/iban");
    expect(editablePointer("$.lines[0].qty")).toBe("/lines/0/qty");
    expect(editablePointer("$['a/b']")).toBe("/a~1b");
    expect(editablePointer("$")).toBeUndefined();
    expect(editablePointer("$..amount")).toBeUndefined();
    expect(editablePointer("$.lines[*]")).toBeUndefined();
  });

  it("applies a patch inside Editable and refuses one outside", () => {
    const details = { amount: 100, payee: { name: "ACME", iban: "X" }, memo: "m" };
    const editable = ["$.amount", "$.payee.iban"];
    expect(
      applyEdit(
        details,
        [
          { op: "test", path: "/amount", value: 100 },
          { op: "replace", path: "/amount", value: 90 },
          { op: "replace", path: "/payee/iban", value: "Y" },
        ],
        editable,
      ),
    ).toEqual({ ok: true, details: { amount: 90, payee: { name: "ACME", iban: "Y" }, memo: "m" } });
    expect(details.amount).toBe(100);
    const outside = applyEdit(details, [{ op: "replace", path: "/memo", value: "x" }], editable);
    expect(outside).toMatchObject({ ok: false });
    expect(!outside.ok && outside.message).toMatch(/'\/memo' is not editable/);
    expect(
      applyEdit(details, [{ op: "move", from: "/memo", path: "/amount" }], editable),
    ).toMatchObject({ ok: false });
    expect(applyEdit(details, [{ op: "test", path: "/amount", value: 1 }], editable)).toMatchObject(
      {
        ok: false,
      },
    );
  });

  it("an EDIT decision approves with the edited details and its patch", () => {
    const params = {
      Subject: "Pay",
      Details: { amount: 100, memo: "m" },
      Editable: ["$.amount"],
    };
    const record = recordOf(params);
    const shown = { details: record.details, editable: ["$.amount"] };
    const patch = [{ op: "replace", path: "/amount", value: 90 }];
    const outcome = applyDecision(
      record,
      who,
      { decision: "EDIT", envelopeHash: record.envelopeHash, patch },
      0,
      shown,
    );
    expect(outcome).toMatchObject({
      ok: true,
      status: "APPROVED",
      edit: { details: { amount: 90, memo: "m" }, patch },
    });
    const outside = applyDecision(
      record,
      who,
      {
        decision: "EDIT",
        envelopeHash: record.envelopeHash,
        patch: [{ op: "replace", path: "/memo", value: "x" }],
      },
      0,
      shown,
    );
    expect(outside).toMatchObject({ ok: false, error: "InvalidRequest" });
    const patchOnApprove = applyDecision(
      record,
      who,
      { decision: "APPROVE", envelopeHash: record.envelopeHash, patch },
      0,
      shown,
    );
    expect(patchOnApprove).toMatchObject({ ok: false, error: "InvalidRequest" });
  });
});

describe("static checks of the new fields", () => {
  function diagnostics(parameters: object) {
    return validateDefinition({
      StartAt: "Ask",
      States: {
        Ask: { Type: "Task", Resource: "stepwise:approval", Parameters: parameters, End: true },
      },
    }).diagnostics.filter((d) => d.code === "INVALID_APPROVAL_FIELD");
  }

  it("accepts a valid form and Editable paths", () => {
    expect(
      diagnostics({
        Subject: "x",
        Details: { amount: 1 },
        ResponseSchema: form,
        Editable: ["$.amount"],
      }),
    ).toEqual([]);
  });

  it("rejects an invalid ResponseSchema at create time, precisely", () => {
    const found = diagnostics({
      Subject: "x",
      ResponseSchema: { type: "object", properties: { n: { type: "nummber" } } },
    });
    expect(found).toHaveLength(1);
    expect(found[0]!.path).toBe("/States/Ask/Parameters/ResponseSchema");
    expect(found[0]!.message).toMatch(
      /'ResponseSchema' is not a valid JSON Schema: .*properties\/n\/type/,
    );
  });

  it("rejects Editable entries that are not plain paths", () => {
    const found = diagnostics({ Subject: "x", Editable: ["$..amount"] });
    expect(found[0]!.message).toMatch(/'\$\.\.amount' is not a JSONPath/);
  });
});
