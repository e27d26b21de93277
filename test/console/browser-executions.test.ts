import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEYS, KEYS, type Stack } from "../e2e/stack.js";
import {
  buildConsoleForTest,
  contextWithKey,
  LARGE_DESKTOP,
  PHONE,
  stackAndBrowser,
  watchErrors,
} from "./browser.js";

/**
 * Finding an execution, following a running one and acting on it, on a 1440×900
 * desktop and a 390×844 phone: one service and one browser for the whole file.
 * With STEPWISE_SCREENSHOTS=1 the pictures go to docs/screenshots/ (the README's).
 */

const ALICE = "alice-secret-0123456789abcdef";
const SHOTS = process.env.STEPWISE_SCREENSHOTS
  ? fileURLToPath(new URL("../../docs/screenshots/", import.meta.url))
  : undefined;

const PASS = { StartAt: "P", States: { P: { Type: "Pass", End: true } } };
const STEPS = {
  StartAt: "A",
  States: {
    A: { Type: "Pass", Result: { a: 1 }, ResultPath: "$.a", Next: "B" },
    B: { Type: "Pass", Result: { b: 2 }, ResultPath: "$.b", Next: "C" },
    C: { Type: "Pass", End: true },
  },
};
/** Wide (a Parallel of four branches) and long: on a phone it does not fit legibly. */
const HOLD = {
  StartAt: "Prepare",
  States: {
    Prepare: { Type: "Pass", Next: "Fan" },
    Fan: {
      Type: "Parallel",
      Branches: ["North", "East", "South", "West"].map((b) => ({
        StartAt: `${b}Check`,
        States: {
          [`${b}Check`]: { Type: "Pass", Next: `${b}Store` },
          [`${b}Store`]: { Type: "Pass", End: true },
        },
      })),
      Next: "Review",
    },
    Review: { Type: "Pass", Next: "Hold" },
    Hold: { Type: "Wait", Seconds: 3600, Next: "Notify" },
    Notify: {
      Type: "Pass",
      Next: "Archive",
    },
    Archive: { Type: "Pass", Next: "Report" },
    Report: { Type: "Pass", Next: "Done" },
    Done: { Type: "Succeed" },
  },
};
const BROKEN = {
  StartAt: "Work",
  States: {
    Work: {
      Type: "Pass",
      Next: "Explode",
    },
    Explode: { Type: "Fail", Error: "Orders.OutOfStock", Cause: "no stock left" },
  },
};
const SLOW = {
  TimeoutSeconds: 1,
  StartAt: "Sleep",
  States: { Sleep: { Type: "Wait", Seconds: 30, End: true } },
};

let stack: Stack;
let browser: Browser;
let desktop: BrowserContext;
let phone: BrowserContext;
let built: Awaited<ReturnType<typeof buildConsoleForTest>>;
const ids: Record<string, string> = {};
const enc = encodeURIComponent;
/** Polls until the expectation holds (a bound, not a delay: the machine may be busy). */
const poll = <T>(check: () => Promise<T> | T, timeout = 10_000) => expect.poll(check, { timeout });

async function start(machine: string, name: string, input: unknown = {}, wait?: number) {
  const r = await stack.client.post(
    `/v1/state-machines/${machine}/executions${wait !== undefined ? `?wait=${wait}` : ""}`,
    { name, input },
  );
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.executionId as string;
}

beforeAll(async () => {
  built = await buildConsoleForTest();
  [stack, browser] = await stackAndBrowser(
    { consoleDir: built.dir, apiKeys: `${API_KEYS},alice:approve:${ALICE}` },
    (s, b) => {
      if (s) stack = s;
      if (b) browser = b;
    },
  );
  for (const [name, definition] of Object.entries({
    pass: PASS,
    steps: STEPS,
    hold: HOLD,
    broken: BROKEN,
    slow: SLOW,
  })) {
    const r = await stack.client.post("/v1/state-machines", { name, definition });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  const began = Date.now();
  const yaml = await stack.client.post("/v1/state-machines", {
    name: "greet",
    definition:
      "# sent as YAML\nStartAt: Hello\nStates:\n  Hello:\n    Type: Pass\n    End: true\n",
  });
  expect(yaml.status, JSON.stringify(yaml.body)).toBe(201);
  // 500 executions to search among, 50 requests at a time.
  for (let i = 0; i < 500; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) => start("pass", `bulk-${String(i + j).padStart(4, "0")}`)),
    );
  }
  // One execution of every status, named st-*.
  const [succeeded, failed, running, paused, aborted, timedOut] = await Promise.all([
    start("steps", "st-succeeded", { order: 7 }, 10),
    start("broken", "st-failed", {}, 10),
    start("hold", "st-running"),
    start("hold", "st-paused"),
    start("hold", "st-aborted"),
    start("slow", "st-timed-out"),
  ]);
  Object.assign(ids, { succeeded, failed, running, paused, aborted, timedOut });
  await stack.client.until(async () => {
    const r = await stack.client.get(`/v1/executions/${enc(paused!)}`);
    return r.body.pendingTasks !== undefined &&
      (await stack.client.get(`/v1/executions/${enc(paused!)}/history?limit=1000`)).body.items.some(
        (e: { type: string }) => e.type === "WaitStateEntered",
      )
      ? true
      : undefined;
  });
  expect((await stack.client.post(`/v1/executions/${enc(paused!)}/pause`, {})).status).toBe(200);
  expect((await stack.client.post(`/v1/executions/${enc(aborted!)}/stop`, {})).status).toBe(200);
  await stack.client.until(async () => {
    const r = await stack.client.get(`/v1/executions/${enc(timedOut!)}`);
    return r.body.status === "TIMED_OUT" ? true : undefined;
  });
  console.log(`fixtures: ${Date.now() - began} ms`);
  [desktop, phone] = await Promise.all([
    contextWithKey(browser, KEYS.admin, LARGE_DESKTOP),
    contextWithKey(browser, KEYS.admin, PHONE),
  ]);
}, 120_000);

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

async function overflow(page: Page): Promise<{ scroll: number; inner: number }> {
  return page.evaluate(
    "({ scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth })",
  ) as Promise<{ scroll: number; inner: number }>;
}

/** Pictures of the pages (the viewport), with STEPWISE_SCREENSHOTS=1 only: they cost time. */
async function shot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  await mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

/** Moves an open console to another page as its links do (History API), without a reload. */
async function go(page: Page, path: string): Promise<void> {
  await page.evaluate(
    `history.pushState(null, "", ${JSON.stringify(path)}); dispatchEvent(new Event("stepwise:navigate"));`,
  );
}

describe("console: find, follow and act on executions (1440×900 and 390×844)", () => {
  it("has no horizontal overflow on any page, at both sizes", async () => {
    const pages: [string, string, string][] = [
      ["machines", "/console/machines", "text=hold"],
      ["machine", "/console/machines/hold", "svg.graph [data-state]"],
      ["executions", "/console/executions?q=st-", "tr[data-execution]"],
      ["execution", `/console/executions/${enc(ids.running!)}`, '[data-state="Hold"]'],
      ["execution-failed", `/console/executions/${enc(ids.failed!)}`, '[data-state="Explode"]'],
      ["approvals", "/console/approvals", "h1"],
      ["not-found", "/console/nowhere/at-all", "text=Not found"],
    ];
    for (const [size, context] of [
      ["desktop", desktop],
      ["phone", phone],
    ] as const) {
      const page = await context.newPage();
      const errors = watchErrors(page);
      await page.goto(`${stack.url}/console/`);
      for (const [name, path, ready] of pages) {
        await go(page, path);
        await page.locator(ready).first().waitFor();
        const { scroll, inner } = await overflow(page);
        expect(scroll, `${name} at ${size}`).toBeLessThanOrEqual(inner);
        if (name !== "not-found") await shot(page, `${name}-${size}`);
      }
      expect(errors).toEqual([]);
      await page.close();
    }
  });

  it("shows the running execution's current state without scrolling on a phone", async () => {
    const page = await open(phone, `/console/executions/${enc(ids.running!)}`);
    const hold = page.locator('svg.graph [data-state="Hold"][data-status="running"]');
    await hold.waitFor();
    // The view settles (fit, then centred on the current state) within a frame or two.
    await poll(async () => {
      const box = await hold.boundingBox();
      const view = await page.locator(".graph-view").boundingBox();
      if (!box || !view) return false;
      const cx = box.x + box.width / 2;
      const cy = box.y + box.height / 2;
      return (
        cx > view.x &&
        cx < view.x + view.width &&
        cy > view.y &&
        cy < view.y + view.height &&
        box.x >= 0 &&
        box.x + box.width <= 390 &&
        box.y >= 0 &&
        box.y + box.height <= 844
      );
    }).toBe(true);
    expect(await page.evaluate("window.scrollY")).toBe(0);
    // Chosen for the user: the current state's details, with the Wait's countdown.
    await page.locator('[data-detail-state="Hold"] [data-countdown]').waitFor();
    // The path taken so far is coloured; Fit shows the whole graph.
    expect(
      await page.locator('svg.graph [data-edge-kind="next"][data-taken="true"]').count(),
    ).toBeGreaterThan(3);
    await page.getByRole("button", { name: "Fit" }).click();
    const scaleNow = async () => Number(await page.locator("svg.graph").getAttribute("data-scale"));
    await poll(scaleNow).toBeLessThan(0.7);
    const fitted = await scaleNow();
    await page.getByRole("button", { name: "Zoom in" }).click();
    await poll(scaleNow).toBeGreaterThan(fitted);
    expect((await overflow(page)).scroll).toBeLessThanOrEqual(390);
    await page.close();
  });

  it("lists every status unclipped, as cards on the phone and a table on the desktop", async () => {
    for (const [context, width] of [
      [phone, 390],
      [desktop, 1440],
    ] as const) {
      const page = await open(context, "/console/executions?q=st-");
      await page.locator("tr[data-execution]").nth(5).waitFor();
      expect(await page.locator("tr[data-execution]").count()).toBe(6);
      // Each badge whole: its text, not cut by its cell, inside the window.
      const badges = await page.locator("tr[data-execution] .badge").evaluateAll((els) =>
        els.map((el) => {
          const r = el.getBoundingClientRect();
          const cell = el.closest("td")!.getBoundingClientRect();
          const style = (globalThis as any).getComputedStyle(el);
          return {
            status: el.textContent,
            whole:
              el.scrollWidth <= el.clientWidth + 1 &&
              r.width > 0 &&
              style.visibility === "visible" &&
              r.left >= cell.left - 1 &&
              r.right <= cell.right + 1 &&
              r.left >= 0 &&
              r.right <= (globalThis as any).innerWidth,
          };
        }),
      );
      expect(badges.map((b) => b.status).sort(), `at ${width}`).toEqual([
        "ABORTED",
        "FAILED",
        "PAUSED",
        "RUNNING",
        "SUCCEEDED",
        "TIMED_OUT",
      ]);
      expect(
        badges.filter((b) => !b.whole),
        `at ${width}`,
      ).toEqual([]);
      // Duration and error columns.
      await page.locator('tr[data-status="FAILED"]').getByText("Orders.OutOfStock").waitFor();
      expect((await overflow(page)).scroll).toBeLessThanOrEqual(width);
      await page.close();
    }
  });

  it("finds one execution among 500 by name prefix, with the search in the URL", async () => {
    const page = await open(desktop, "/console/executions");
    await page.locator("tr[data-execution]").first().waitFor();
    const began = Date.now();
    await page.getByLabel("Name starts with").fill("bulk-0427");
    await page.waitForURL(/q=bulk-0427/);
    await poll(() => page.locator("tr[data-execution]").count()).toBe(1);
    expect(await page.locator("tr[data-execution] .cell-name").textContent()).toBe("bulk-0427");
    expect(Date.now() - began).toBeLessThan(5_000);

    // A shared link opens the same view; Older keeps its place through a visit and Back.
    // (Started 50 at a time, in order: bulk-0450… fill the first page, bulk-0400… the second.)
    const shared = await open(phone, "/console/executions?q=bulk-04&stateMachine=pass");
    const names = () =>
      shared
        .locator("tr[data-execution] .cell-name a")
        .evaluateAll((els) => els.map((e) => e.textContent!));
    await shared.locator("tr[data-execution]").nth(49).waitFor();
    const newest = await names();
    expect(newest.every((n) => n >= "bulk-0450")).toBe(true);
    await shared.getByRole("button", { name: "Older" }).click();
    await shared.waitForURL(/cursor=/);
    await poll(async () => {
      const shown = await names();
      return shown.length === 50 && shown.every((n) => n < "bulk-0450");
    }).toBe(true);
    const older = await names();
    expect(older).toHaveLength(50);
    await shared.locator("tr[data-execution] .cell-name a").first().click();
    await shared.waitForURL(new RegExp(`executions/.+${older[0]}`));
    await shared.goBack();
    await poll(names).toEqual(older);
    await shared.getByRole("button", { name: "Newer" }).click();
    await poll(names).toEqual(newest);
    await Promise.all([page.close(), shared.close()]);
  });

  it("follows a live execution: newest event on top, the Wait counted down, then the end", async () => {
    const id = await start("hold", "live-follow");
    const page = await open(desktop, `/console/executions/${enc(id)}`);
    const errors = watchErrors(page);
    const top = page.locator(".timeline li").first();
    await poll(() => top.getAttribute("data-event-type")).toBe("WaitStateEntered");
    await page.locator('[data-detail-state="Hold"] [data-countdown]').waitFor();
    // No reload: the stream brings what happens next, and the newest event stays on top.
    expect((await stack.client.post(`/v1/executions/${enc(id)}/pause`, {})).status).toBe(200);
    await poll(() => top.getAttribute("data-event-type")).toBe("ExecutionPaused");
    expect((await stack.client.post(`/v1/executions/${enc(id)}/stop`, {})).status).toBe(200);
    await poll(() => top.getAttribute("data-event-type")).toBe("ExecutionAborted");
    await page.locator("h1 .badge", { hasText: "ABORTED" }).waitFor();
    const history = await stack.client.get(`/v1/executions/${enc(id)}/history?limit=1000`);
    const shown = await page
      .locator(".timeline li")
      .evaluateAll((rows) => rows.map((r) => Number(r.getAttribute("data-event-id"))));
    expect(shown).toEqual(history.body.items.map((e: { id: number }) => e.id).reverse());
    expect(errors).toEqual([]);
    await page.close();
  });

  it("forks from an event picked in the history and opens the new execution", async () => {
    const page = await open(desktop, `/console/executions/${enc(ids.succeeded!)}`);
    const history = await stack.client.get(
      `/v1/executions/${enc(ids.succeeded!)}/history?limit=1000`,
    );
    const entered = history.body.items.find(
      (e: any) => e.type === "PassStateEntered" && e.stateEnteredEventDetails?.name === "B",
    );
    expect(entered).toBeDefined();
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: `Fork from event ${entered.id}` }).click();
    await page.waitForURL((url) => !url.pathname.endsWith(enc(ids.succeeded!)));
    const forkId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
    const fork = await stack.client.get(`/v1/executions/${enc(forkId)}`);
    expect(fork.body.forkedFrom).toEqual({ executionId: ids.succeeded, eventId: entered.id });
    await page.locator("h1 .badge", { hasText: "SUCCEEDED" }).waitFor();
    await page.getByText(`event ${entered.id}`).first().waitFor();
    // Its graph: A was not run again, B and C were.
    await page.locator('[data-state="C"][data-status="succeeded"]').waitFor();
    await page.close();
  });

  it("stops with an error and a cause, and shows the API's answer", async () => {
    const id = await start("hold", "to-stop");
    const page = await open(desktop, `/console/executions/${enc(id)}`);
    await page.locator('[data-state="Hold"][data-status="running"]').waitFor();
    await page.getByText("Reason (pause)").click();
    await page.getByLabel("Stop error").fill("Ops.Cancelled");
    await page.getByLabel("Stop cause").fill("customer asked");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Stop", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Stop: the execution is ABORTED" }).waitFor();
    const record = await stack.client.get(`/v1/executions/${enc(id)}`);
    expect(record.body).toMatchObject({
      status: "ABORTED",
      error: "Ops.Cancelled",
      cause: "customer asked",
    });
    // Restart answers with a link to the new execution.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Restart", exact: true }).click();
    await page
      .getByRole("status")
      .filter({ hasText: "Restart: started a new execution" })
      .waitFor();
    await page.close();
  });

  it("shows a definition sent as YAML as YAML and as JSON, to copy and download", async () => {
    const page = await open(desktop, "/console/machines/greet");
    await page.getByText("Definition").click();
    const text = page.locator("pre.definition-text");
    await poll(() => text.textContent()).toContain("# sent as YAML");
    expect(await text.getAttribute("data-format")).toBe("yaml");
    await page.getByRole("tab", { name: "JSON" }).click();
    expect(JSON.parse((await text.textContent())!)).toEqual({
      StartAt: "Hello",
      States: { Hello: { Type: "Pass", End: true } },
    });
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: /^Download / }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("greet-v1.json");
    await page.close();
  });

  it("links a child execution and its parent both ways", async () => {
    const child = { StartAt: "Echo", States: { Echo: { Type: "Pass", End: true } } };
    const parent = {
      StartAt: "Run",
      States: {
        Run: {
          Type: "Task",
          Resource: "arn:aws:states:::states:startExecution",
          Parameters: {
            StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:kid",
            Input: {},
          },
          End: true,
        },
      },
    };
    for (const [name, definition] of [
      ["kid", child],
      ["elder", parent],
    ] as const) {
      const r = await stack.client.post("/v1/state-machines", { name, definition });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    const id = await start("elder", "elder-1", {}, 10);
    const done = await stack.client.get(`/v1/executions/${enc(id)}`);
    expect(done.body.status).toBe("SUCCEEDED");
    const kid = done.body.output.ExecutionArn as string;
    const page = await open(desktop, `/console/executions/${enc(kid)}`);
    const startedBy = page.locator(`[data-parent-execution="${id}"] a`);
    await startedBy.waitFor();
    expect(await startedBy.getAttribute("href")).toBe(`/console/executions/${enc(id)}`);
    await startedBy.click();
    await page.locator('svg.graph [data-state="Run"][data-status="succeeded"]').click();
    const link = page.locator('[data-detail-state="Run"] [data-child-execution] a');
    await link.waitFor();
    expect(await link.textContent()).toBe("Child execution");
    expect(await link.getAttribute("href")).toBe(`/console/executions/${enc(kid)}`);
    await page.close();
  });

  it("tells an approve key it may not read an execution, once, and loads nothing more", async () => {
    const context = await contextWithKey(browser, ALICE, PHONE);
    const page = await context.newPage();
    const asked: string[] = [];
    page.on("request", (request) => asked.push(new URL(request.url()).pathname));
    await page.goto(`${stack.url}/console/executions/${enc(ids.running!)}`);
    await page.locator('[data-forbidden="executions:read"]').waitFor();
    // Nothing of the execution or its definition is asked for: there is nothing to wait for.
    expect(asked.filter((p) => /^\/v1\/(executions|state-machines)/.test(p))).toEqual([]);
    expect(await page.locator('[data-forbidden="executions:read"]').count()).toBe(1);
    expect(await page.getByText("executions:read").count()).toBe(1);
    expect(await page.getByText(/Loading/).count()).toBe(0);
    expect(await page.getByText(/admin or run/).count()).toBe(1);
    expect((await overflow(page)).scroll).toBeLessThanOrEqual(390);
    await context.close();
  });
});
