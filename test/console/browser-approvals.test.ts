import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEYS, KEYS, type Stack } from "../e2e/stack.js";
import {
  buildConsoleForTest,
  contextWithKey,
  stackAndBrowser,
  PHONE,
  screenshot,
  watchErrors,
} from "./browser.js";

/**
 * The approval inbox in a real browser: approve and reject (the decision echoes
 * the envelope hash shown), live updates of the execution page, the phone
 * viewport, scopes that hide the buttons, and keyboard focus.
 */

const ALICE = "alice-secret-0123456789abcdef";

const PAY = {
  StartAt: "Approve",
  States: {
    Approve: {
      Type: "Task",
      Resource: "arn:aws:states:::stepwise:approval.waitForTaskToken",
      Parameters: {
        "Subject.$": "States.Format('Pay {} EUR to {}', $.amount, $.payee)",
        "Details.$": "$",
        Approvers: ["finance"],
        Policy: "payments-v1",
        ExpiresInSeconds: 3600,
      },
      ResultPath: "$.approval",
      Catch: [
        { ErrorEquals: ["Stepwise.ApprovalRejected"], ResultPath: "$.rejection", Next: "Rejected" },
      ],
      Next: "Pay",
    },
    Pay: { Type: "Pass", Result: "PAID", ResultPath: "$.status", End: true },
    Rejected: { Type: "Pass", Result: "REJECTED", ResultPath: "$.status", End: true },
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
      apiKeys: `${API_KEYS},alice:approve:${ALICE}`,
      approverGroups: "alice=finance",
    },
    (s, b) => {
      if (s) stack = s;
      if (b) browser = b;
    },
  );
  expect(
    (await stack.client.post("/v1/state-machines", { name: "pay", definition: PAY })).status,
  ).toBe(201);
  alice = await contextWithKey(browser, ALICE);
});

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await built?.remove();
});

const enc = encodeURIComponent;

/** Starts a payment and waits for its approval record; returns both ids. */
async function pendingPayment(payee: string, amount: number) {
  const started = await stack.client.post("/v1/state-machines/pay/executions", {
    input: { payee, amount },
  });
  expect(started.status).toBe(201);
  const { executionId } = started.body;
  const approval = await stack.client.until(async () => {
    const list = await stack.client.get("/v1/approvals?status=PENDING");
    return list.body.items.find((a: { executionId: string }) => a.executionId === executionId);
  });
  return { executionId: executionId as string, approval };
}

async function finished(executionId: string) {
  return stack.client.until(async () => {
    const r = await stack.client.get(`/v1/executions/${enc(executionId)}`);
    return r.body.status === "RUNNING" ? undefined : r.body;
  });
}

/** The inbox card of one approval. */
function card(page: Page, approvalId: string) {
  return page.locator(`[data-approval="${approvalId}"]`);
}

async function noHorizontalOverflow(page: Page): Promise<number> {
  return page.evaluate("document.scrollingElement.scrollWidth");
}

describe("console: approvals", () => {
  it("approves from the inbox; the execution page follows it live to SUCCEEDED", async () => {
    const { executionId, approval } = await pendingPayment("ACME", 120);
    // The execution page, opened while the approval waits: the state runs, the task is pending.
    const execution = await alice.newPage();
    const admin = await contextWithKey(browser, KEYS.admin);
    const watcher = await admin.newPage();
    const errors = watchErrors(watcher);
    await watcher.goto(`${stack.url}/console/executions/${enc(executionId)}`);
    await watcher.locator('[data-state="Approve"][data-status="running"]').waitFor();
    await watcher.getByText("Waiting for").waitFor();

    const inbox = execution;
    await inbox.goto(`${stack.url}/console/approvals`);
    const item = card(inbox, approval.approvalId);
    await item.getByText("Pay 120 EUR to ACME").waitFor();
    await item.getByText("payments-v1").waitFor();
    expect(await inbox.locator("[data-pending-count]").getAttribute("data-pending-count")).toBe(
      "1",
    );
    await screenshot(inbox, "console-inbox");
    await item.getByRole("button", { name: "Approve", exact: true }).click();
    await inbox.getByText("Approved: Pay 120 EUR to ACME").waitFor();
    await inbox.getByText("Nothing waits for your decision.").waitFor();

    const done = await finished(executionId);
    expect(done).toMatchObject({ status: "SUCCEEDED", output: { status: "PAID" } });
    expect(done.output.approval).toMatchObject({
      envelopeHash: approval.envelopeHash,
      decisions: [{ approver: "alice", decision: "APPROVE" }],
    });
    // No reload: the stream brought the rest of the history to the open page.
    await watcher.locator("h1 .badge", { hasText: "SUCCEEDED" }).waitFor();
    await watcher.locator('[data-state="Pay"][data-status="succeeded"]').waitFor();
    expect(await watcher.locator('[data-state="Rejected"]').getAttribute("data-status")).toBe(
      "not-reached",
    );
    await screenshot(watcher, "console-execution-approved");
    expect(errors).toEqual([]);
    await Promise.all([inbox.close(), admin.close()]);
  });

  it("rejects with a comment; the comment is in the execution's history", async () => {
    const { executionId, approval } = await pendingPayment("Mallory", 9999);
    const page = await alice.newPage();
    await page.goto(`${stack.url}/console/approvals`);
    const item = card(page, approval.approvalId);
    const comment = `Unknown payee, ticket ${approval.approvalId.slice(-6)}`;
    await item.getByLabel("Comment (optional)").fill(comment);
    await item.getByRole("button", { name: "Reject" }).click();
    await page.getByText("Rejected: Pay 9999 EUR to Mallory").waitFor();

    expect(await finished(executionId)).toMatchObject({
      status: "SUCCEEDED",
      output: { status: "REJECTED" },
    });
    const history = await stack.client.get(`/v1/executions/${enc(executionId)}/history?limit=1000`);
    const decided = history.body.items.find((e: { type: string }) => e.type === "ApprovalDecided");
    expect(JSON.stringify(decided)).toContain(comment);

    await page.getByRole("tab", { name: "Decided" }).click();
    const decidedCard = card(page, approval.approvalId);
    await decidedCard.getByText(comment).waitFor();
    await decidedCard.getByText("REJECTED", { exact: true }).first().waitFor();
    await screenshot(page, "console-decided");
    await page.close();
  });

  it("works on a 390×844 phone: approve without horizontal scrolling", async () => {
    const { executionId, approval } = await pendingPayment(
      "A payee with a rather long name that must wrap on a phone",
      42,
    );
    const phone = await contextWithKey(browser, ALICE, PHONE);
    const page = await phone.newPage();
    await page.goto(`${stack.url}/console/approvals`);
    const item = card(page, approval.approvalId);
    await item.getByRole("button", { name: "Approve", exact: true }).waitFor();
    expect(await noHorizontalOverflow(page)).toBeLessThanOrEqual(390);
    await screenshot(page, "console-inbox-phone");
    await item.getByRole("button", { name: "Approve", exact: true }).tap();
    await page.getByText("Nothing waits for your decision.").waitFor();
    expect(await finished(executionId)).toMatchObject({ status: "SUCCEEDED" });
    expect(await noHorizontalOverflow(page)).toBeLessThanOrEqual(390);
    await phone.close();
  });

  it("shows Approve to a key that may decide, and not to a run key", async () => {
    const { executionId, approval } = await pendingPayment("Bob", 7);
    const runner = await contextWithKey(browser, KEYS.run);
    const asRunner = await runner.newPage();
    await asRunner.goto(`${stack.url}/console/approvals`);
    await asRunner.getByText("may not read approvals").waitFor();
    expect(await asRunner.getByRole("button", { name: "Approve", exact: true }).count()).toBe(0);
    expect(await asRunner.getByRole("link", { name: /Approvals/ }).count()).toBe(0);
    // The run key's execution page has no approval buttons either (and no inbox link).
    await asRunner.goto(`${stack.url}/console/executions/${enc(executionId)}`);
    await asRunner.locator('[data-state="Approve"][data-status="running"]').waitFor();
    expect(await asRunner.getByRole("button", { name: "Approve", exact: true }).count()).toBe(0);
    await screenshot(asRunner, "console-run-key");

    const asAlice = await alice.newPage();
    await asAlice.goto(`${stack.url}/console/approvals`);
    await card(asAlice, approval.approvalId)
      .getByRole("button", { name: "Approve", exact: true })
      .waitFor();
    // Alice may not start or stop executions: no such buttons for her.
    expect(await asAlice.getByRole("link", { name: "Executions" }).count()).toBe(0);
    await Promise.all([runner.close(), asAlice.close()]);
  });

  it("pauses, resumes and stops a running execution (run key); its approval is cancelled", async () => {
    const { executionId, approval } = await pendingPayment("Eve", 13);
    const runner = await contextWithKey(browser, KEYS.run);
    const page = await runner.newPage();
    await page.goto(`${stack.url}/console/executions/${enc(executionId)}`);
    // Each action asks first (Pause, Resume, Stop, Redrive): yes to every one.
    page.on("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Pause", exact: true }).click();
    await page.locator("h1 .badge", { hasText: "PAUSED" }).waitFor();
    await page.getByText("Paused by runner").waitFor();
    expect((await stack.client.get(`/v1/executions/${enc(executionId)}`)).body.status).toBe(
      "PAUSED",
    );
    await page.getByRole("button", { name: "Resume", exact: true }).click();
    await page.locator("h1 .badge", { hasText: "RUNNING" }).waitFor();
    expect((await stack.client.get(`/v1/executions/${enc(executionId)}`)).body.status).toBe(
      "RUNNING",
    );
    await page.getByRole("button", { name: "Stop", exact: true }).click();
    await page.locator("h1 .badge", { hasText: "ABORTED" }).waitFor();
    expect(await page.getByRole("button", { name: "Stop", exact: true }).count()).toBe(0);
    expect((await finished(executionId)).status).toBe("ABORTED");
    const after = await stack.client.get(`/v1/approvals/${approval.approvalId}`);
    expect(after.body.status).toBe("CANCELLED");
    // Redrive: it runs again from the approval, which is asked for anew.
    await page.getByRole("button", { name: "Redrive", exact: true }).click({ timeout: 5000 });
    await page.locator("h1 .badge", { hasText: "RUNNING" }).waitFor({ timeout: 5000 });
    const redriven = await stack.client.get(`/v1/executions/${enc(executionId)}`);
    expect(redriven.body).toMatchObject({ status: "RUNNING", redriveCount: 1 });
    await page.locator('[data-state="Approve"][data-status="running"]').waitFor({ timeout: 5000 });
    await runner.close();
  });

  it("reaches Approve with Tab, and shows where the focus is", async () => {
    const page = await alice.newPage();
    await page.goto(`${stack.url}/console/approvals`);
    await page.getByRole("button", { name: "Approve", exact: true }).first().waitFor();
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = (await page.evaluate("document.activeElement?.textContent?.trim()")) === "Approve";
    }
    expect(reached).toBe(true);
    const outline = (await page.evaluate(
      "(() => { const s = getComputedStyle(document.activeElement); return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) }; })()",
    )) as { style: string; width: number };
    expect(outline.style).not.toBe("none");
    expect(outline.width).toBeGreaterThanOrEqual(2);
    await screenshot(page, "console-keyboard-focus");
    // Enter on the focused button decides, as a click does.
    await page.keyboard.press("Enter");
    await page.getByText(/^Approved: /).waitFor();
    await page.close();
  });
});
