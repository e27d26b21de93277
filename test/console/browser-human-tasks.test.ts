import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEYS, type Stack } from "../e2e/stack.js";
import {
  buildConsoleForTest,
  contextWithKey,
  PHONE,
  screenshot,
  stackAndBrowser,
  watchErrors,
} from "./browser.js";

/**
 * Human tasks in a real browser on a phone-sized page (issue 40): the decision view
 * at `/console/approvals/:id` renders the form from the approval's `responseSchema`
 * (a select, a number, a checkbox, a nested object, an array of strings), shows the
 * editable field beside its original and the JSON Patch before sending, and after
 * the first of two approvals says it waits for another approver and leaves the
 * inbox of the one who decided.
 */
const ALICE = "alice-secret-0123456789abcdef";
const BOB = "bob-secret-0123456789abcdefgh";

const FORM = {
  type: "object",
  required: ["reason", "limit"],
  properties: {
    reason: { title: "Reason", enum: ["budget", "vendor", "other"] },
    limit: { title: "Limit", type: "number", minimum: 0 },
    urgent: { title: "Urgent", type: "boolean" },
    contact: {
      title: "Contact",
      type: "object",
      required: ["name"],
      properties: { name: { title: "Name", type: "string", minLength: 1 } },
    },
    tags: { title: "Tags", type: "array", items: { type: "string" } },
  },
  additionalProperties: false,
};

const PAY = {
  StartAt: "Approve",
  States: {
    Approve: {
      Type: "Task",
      Resource: "arn:aws:states:::stepwise:approval",
      Parameters: {
        "Subject.$": "States.Format('Pay {} EUR to {}', $.amount, $.payee)",
        "Details.$": "$",
        Approvers: ["finance"],
        RequiredApprovals: 2,
        ResponseSchema: FORM,
        Editable: ["$.amount"],
      },
      End: true,
    },
  },
};

let stack: Stack;
let browser: Browser;
let alice: BrowserContext;
let built: Awaited<ReturnType<typeof buildConsoleForTest>>;

beforeAll(async () => {
  built = await buildConsoleForTest();
  [stack, browser] = await stackAndBrowser(
    {
      consoleDir: built.dir,
      apiKeys: `${API_KEYS},alice:approve:${ALICE},bob:approve:${BOB}`,
      approverGroups: "alice=finance;bob=finance",
    },
    (s, b) => {
      if (s) stack = s;
      if (b) browser = b;
    },
  );
  expect(
    (await stack.client.post("/v1/state-machines", { name: "pay", definition: PAY })).status,
  ).toBe(201);
  alice = await contextWithKey(browser, ALICE, PHONE);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await built?.remove();
});

const enc = encodeURIComponent;

async function noHorizontalOverflow(page: Page): Promise<number> {
  return page.evaluate("document.scrollingElement.scrollWidth");
}

describe("console: human tasks", () => {
  it("fills a generated form on a phone, edits a field with the patch shown, and submits", async () => {
    const started = await stack.client.post("/v1/state-machines/pay/executions", {
      input: { payee: "ACME", amount: 100 },
    });
    expect(started.status).toBe(201);
    const executionId = started.body.executionId as string;
    const approval = await stack.client.until(async () => {
      const list = await stack.client.get("/v1/approvals?status=PENDING");
      return list.body.items.find((a: { executionId: string }) => a.executionId === executionId);
    }, 30_000);

    const page = await alice.newPage();
    const errors = watchErrors(page);
    await page.goto(`${stack.url}/console/approvals/${approval.approvalId}`);
    await page.getByRole("heading", { name: /Pay 100 EUR to ACME/ }).waitFor();

    // Claim it and comment, without deciding.
    await page.getByRole("button", { name: "Claim" }).click();
    await page.locator("[data-claim]", { hasText: "by alice" }).waitFor();
    await page.getByLabel("Add a comment").fill("checking the invoice");
    await page.getByRole("button", { name: "Comment", exact: true }).click();
    await page.locator(".comments").getByText("checking the invoice").waitFor();

    // The form generated from the schema.
    await page.getByLabel("Reason").selectOption({ label: "vendor" });
    await page.getByLabel("Limit").fill("250");
    await page.getByLabel("Urgent").check();
    await page.getByRole("textbox", { name: "Name", exact: true }).fill("Ana");
    await page.getByRole("button", { name: "Add Tags" }).click();
    await page.getByRole("textbox", { name: "Tags 1", exact: true }).fill("q4");

    // The editable field beside its original; the patch is shown before sending.
    const amount = page.locator('[data-edit="$.amount"]');
    await amount.getByText("was 100").waitFor();
    await amount.getByRole("textbox").fill("90");
    const patch = page.locator("[data-patch]");
    await patch.waitFor();
    expect(JSON.parse((await patch.textContent())!)).toEqual([
      { op: "replace", path: "/amount", value: 90 },
    ]);
    expect(await noHorizontalOverflow(page)).toBeLessThanOrEqual(390);
    await screenshot(page, "console-human-task-phone");
    await page.getByRole("button", { name: "Approve with changes" }).click();

    // The first of two approvals: it says so, and leaves alice's inbox.
    await page.getByText("1 of 2 approvals, waiting for another approver").waitFor();
    const record = (await stack.client.get(`/v1/approvals/${approval.approvalId}`)).body;
    // Her decision ended her claim: the next approver may decide.
    expect(record.claim).toBeUndefined();
    expect(record.comments).toMatchObject([{ by: "alice", text: "checking the invoice" }]);
    expect(record.decisions).toEqual([
      expect.objectContaining({
        approver: "alice",
        decision: "EDIT",
        patch: [{ op: "replace", path: "/amount", value: 90 }],
        response: {
          reason: "vendor",
          limit: 250,
          urgent: true,
          contact: { name: "Ana" },
          tags: ["q4"],
        },
      }),
    ]);
    await page.goto(`${stack.url}/console/approvals`);
    await page.getByText("Nothing waits for your decision.").waitFor();

    // Bob approves with his own answer; the output carries the edited details.
    const yes = await stack.client.post(
      `/v1/approvals/${approval.approvalId}/decisions`,
      {
        decision: "APPROVE",
        envelopeHash: approval.envelopeHash,
        response: { reason: "vendor", limit: 250 },
      },
      { key: BOB },
    );
    expect(yes.status).toBe(200);
    const done = await stack.client.until(async () => {
      const r = await stack.client.get(`/v1/executions/${enc(executionId)}`);
      return r.body.status === "RUNNING" ? undefined : r.body;
    }, 30_000);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.output.details).toEqual({ payee: "ACME", amount: 90 });
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
