import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, type Stack } from "../e2e/stack.js";
import {
  buildConsoleForTest,
  contextWithKey,
  LARGE_DESKTOP,
  PHONE,
  screenshot,
  stackAndBrowser,
  watchErrors,
} from "./browser.js";

/**
 * Schedules, rules and the event bus in the console, on a 1440×900 desktop and a
 * 390×844 phone: one service and one browser for the whole file. With
 * STEPWISE_SCREENSHOTS=1 the list pages' pictures go to docs/screenshots/.
 */

const SHOTS = process.env.STEPWISE_SCREENSHOTS
  ? fileURLToPath(new URL("../../docs/screenshots/", import.meta.url))
  : undefined;

const PASS = { StartAt: "P", States: { P: { Type: "Pass", End: true } } };
const HOUR = 3_600_000;

let stack: Stack;
let browser: Browser;
let desktop: BrowserContext;
let phone: BrowserContext;
let built: Awaited<ReturnType<typeof buildConsoleForTest>>;
const enc = encodeURIComponent;
const poll = <T>(check: () => Promise<T> | T, timeout = 10_000) => expect.poll(check, { timeout });

beforeAll(async () => {
  built = await buildConsoleForTest();
  [stack, browser] = await stackAndBrowser({ consoleDir: built.dir }, (s, b) => {
    if (s) stack = s;
    if (b) browser = b;
  });
  for (const name of ["report", "orders"]) {
    const r = await stack.client.post("/v1/state-machines", { name, definition: PASS });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  // Hourly: no tick of its own while the test runs (the next one is at the hour).
  const s = await stack.client.post("/v1/schedules", {
    name: "hourly-report",
    target: { stateMachine: "report", input: { kind: "hourly" } },
    scheduleExpression: "cron(0 * * * ? *)",
    scheduleExpressionTimezone: "Europe/Paris",
    overlapPolicy: "BUFFER_ONE",
  });
  expect(s.status, JSON.stringify(s.body)).toBe(201);
  [desktop, phone] = await Promise.all([
    contextWithKey(browser, KEYS.admin, LARGE_DESKTOP),
    contextWithKey(browser, KEYS.admin, PHONE),
  ]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await built?.remove();
});

async function open(context: BrowserContext, path: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(stack.url + path);
  return page;
}

async function shot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  await mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

/** An instant as the datetime-local value the page's browser reads it as. */
function local(page: Page, ms: number): Promise<string> {
  return page.evaluate(
    `(() => { const d = new Date(${ms}); return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16); })()`,
  ) as Promise<string>;
}

describe("console: schedules, rules and events (1440×900 and 390×844)", () => {
  it("lists a schedule, disables it and backfills two ticks from its page", async () => {
    const page = await open(desktop, "/console/schedules");
    const errors = watchErrors(page);
    const row = page.locator('tr[data-schedule="hourly-report"]');
    await row.waitFor();
    expect(await row.getAttribute("data-state")).toBe("ENABLED");
    const rowText = await row.innerText();
    for (const part of ["cron(0 * * * ? *)", "Europe/Paris", "report", "BUFFER_ONE"])
      expect(rowText).toContain(part);
    await shot(page, "schedules-desktop");

    await row.getByRole("link", { name: "hourly-report" }).click();
    await page.getByRole("button", { name: "Disable" }).click();
    await page.getByRole("button", { name: "Enable" }).waitFor();
    await poll(async () => (await stack.client.get("/v1/schedules/hourly-report")).body.state).toBe(
      "DISABLED",
    );
    // The rest of the definition went back unchanged with the PUT.
    const after = (await stack.client.get("/v1/schedules/hourly-report")).body;
    expect(after.scheduleExpressionTimezone).toBe("Europe/Paris");
    expect(after.target.input).toEqual({ kind: "hourly" });

    // [hour − 2 h 30, hour − 30 min) holds exactly two ticks: hour − 2 h and hour − 1 h.
    const hour = Math.floor(Date.now() / HOUR) * HOUR;
    await page.locator('input[name="from"]').fill(await local(page, hour - 2.5 * HOUR));
    await page.locator('input[name="to"]').fill(await local(page, hour - 0.5 * HOUR));
    await page.getByRole("button", { name: "Backfill" }).click();
    const links = page.locator("[data-backfilled] a");
    await poll(() => links.count()).toBe(2);
    const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]|\.\d+/g, "");
    const ids = await page
      .locator("[data-backfilled]")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-backfilled")));
    expect(ids.map((id) => id!.split(":").pop())).toEqual([
      `hourly-report-${stamp(hour - 2 * HOUR)}`,
      `hourly-report-${stamp(hour - HOUR)}`,
    ]);
    for (const id of ids) {
      expect(await page.locator(`[data-backfilled="${id}"] a`).getAttribute("href")).toBe(
        `/console/executions/${enc(id!)}`,
      );
      expect((await stack.client.get(`/v1/executions/${enc(id!)}`)).status).toBe(200);
    }
    await screenshot(page, "console-schedule-backfilled");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("sends a test event that matches a rule, lists it and starts the target", async () => {
    const r = await stack.client.post("/v1/rules", {
      name: "order-placed",
      eventPattern: { source: ["shop"], "detail-type": ["OrderPlaced"] },
      target: { stateMachine: "orders", inputPath: "$.detail" },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);

    const page = await open(desktop, "/console/rules");
    const errors = watchErrors(page);
    const row = page.locator('tr[data-rule="order-placed"]');
    await row.waitFor();
    expect(await row.innerText()).toContain("source = shop");
    await shot(page, "rules-desktop");
    await row.getByRole("link", { name: "order-placed" }).click();
    await page.getByText('"OrderPlaced"').waitFor();
    await screenshot(page, "console-rule");

    await page.getByRole("link", { name: "Events" }).click();
    await page.getByText("Send a test event").click();
    await page.locator('input[name="source"]').fill("shop");
    await page.locator('input[name="detail-type"]').fill("OrderPlaced");
    // Not JSON: refused before anything is sent.
    await page.locator('textarea[name="detail"]').fill("{orderId: 1}");
    await page.getByRole("button", { name: "Send" }).click();
    await page.getByText("The detail is not JSON").waitFor();
    await page.locator('textarea[name="detail"]').fill('{"orderId": "o-17"}');
    await page.getByRole("button", { name: "Send" }).click();
    const sent = page.locator("[data-event-id]");
    await sent.waitFor();
    const eventId = (await sent.getAttribute("data-event-id"))!;
    await page.locator(`tr[data-event="${eventId}"]`).waitFor();
    expect(await page.locator(`tr[data-event="${eventId}"]`).innerText()).toContain("OrderPlaced");
    await shot(page, "events-desktop");

    // The rule started its target, named `<rule>-<event id>`, with the detail as input.
    const execution = await stack.client.until(async () => {
      const list = await stack.client.get(
        `/v1/executions?stateMachine=orders&namePrefix=order-placed-`,
      );
      return list.body.items[0];
    });
    expect(execution.name).toBe(`order-placed-${eventId}`);
    const detail = await stack.client.until(async () => {
      const d = await stack.client.get(`/v1/executions/${enc(execution.executionId)}`);
      return d.body.status === "SUCCEEDED" ? d.body : undefined;
    });
    expect(detail.input).toEqual({ orderId: "o-17" });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("has no horizontal overflow on the three pages on a phone", async () => {
    const page = await open(phone, "/console/schedules");
    const errors = watchErrors(page);
    for (const [name, ready] of [
      ["schedules", "tr[data-schedule]"],
      ["rules", "tr[data-rule]"],
      ["events", "tr[data-event]"],
    ] as const) {
      await page.goto(`${stack.url}/console/${name}`);
      await page.locator(ready).first().waitFor();
      const { scroll, inner } = (await page.evaluate(
        "({ scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth })",
      )) as { scroll: number; inner: number };
      expect(scroll, name).toBeLessThanOrEqual(inner);
      // The state (or detail-type) badge is on screen, not cut off.
      const badge = await page.locator(`${ready} .badge`).first().boundingBox();
      expect(badge && badge.x + badge.width <= inner).toBe(true);
      await shot(page, `${name}-phone`);
    }
    expect(errors).toEqual([]);
    await page.close();
  });
});
