import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEYS, KEYS, type Stack } from "../e2e/stack.js";
import {
  buildConsoleForTest,
  contextWithKey,
  go,
  LARGE_DESKTOP,
  PagePool,
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
/** One Wait: a running execution that costs the worker one transition. */
const NAP = { StartAt: "Nap", States: { Nap: { Type: "Wait", Seconds: 3600, End: true } } };
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
/** The 500 executions of `pass` named bulk-0000…bulk-0499, once all have started. */
let searchable: Promise<void>;
/** st-timed-out has timed out: every status is there. */
let timedOut$: Promise<unknown>;
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
  const began = Date.now();
  const machines = Object.entries({
    pass: PASS,
    steps: STEPS,
    hold: HOLD,
    broken: BROKEN,
    slow: SLOW,
    nap: NAP,
    // Sent as YAML: shown as sent, and as JSON.
    greet: "# sent as YAML\nStartAt: Hello\nStates:\n  Hello:\n    Type: Pass\n    End: true\n",
  });
  await Promise.all(
    machines.map(async ([name, definition]) => {
      const r = await stack.client.post("/v1/state-machines", { name, definition });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }),
  );
  // 500 executions to search among, in rounds: the last 100 in two rounds of 50 so
  // that bulk-0450… are the newest (the paging test counts on it), the others in
  // rounds of 100. They go on in the background while the first tests run; the test
  // that searches them waits for them.
  searchable = (async () => {
    for (const [from, to] of [
      [0, 100],
      [100, 200],
      [200, 300],
      [300, 400],
      [400, 450],
      [450, 500],
    ] as const) {
      await Promise.all(
        Array.from({ length: to - from }, (_, j) =>
          start("pass", `bulk-${String(from + j).padStart(4, "0")}`),
        ),
      );
    }
  })();
  // Its failure is reported by the test that awaits it, not as an unhandled rejection.
  searchable.catch(() => undefined);
  // One execution of every status, named st-*.
  const [succeeded, failed, running, paused, aborted, timedOut] = await Promise.all([
    start("steps", "st-succeeded", { order: 7 }, 10),
    start("broken", "st-failed", {}, 10),
    start("hold", "st-running"),
    start("nap", "st-paused"),
    start("nap", "st-aborted"),
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
  // Its TimeoutSeconds (1, the least there is) runs out while the first test runs.
  timedOut$ = stack.client.until(async () => {
    const r = await stack.client.get(`/v1/executions/${enc(timedOut!)}`);
    return r.body.status === "TIMED_OUT" ? true : undefined;
  });
  timedOut$.catch(() => undefined);
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

const pools = new Map<BrowserContext, PagePool>();

/** A page of `context` at `path`: a pooled one moved there, or a new one the first times. */
function open(context: BrowserContext, path: string): Promise<Page> {
  let pool = pools.get(context);
  if (!pool) pools.set(context, (pool = new PagePool(context, stack.url)));
  return pool.open(path);
}

/** The test is done with the page: back to its pool for the next test. */
function giveBack(page: Page): Promise<void> {
  return pools.get(page.context())!.release(page);
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

// The tests share the service, the browser, its two contexts and their pages (PagePool:
// a page moves to the next test's path instead of a new tab booting the console), and
// each test uses executions of its own names. They run one after another: every page
// holds an approvals stream, and a browser opens six connections to one origin.
describe("console: find, follow and act on executions (1440×900 and 390×844)", () => {
  it("has no horizontal overflow on any page, at both sizes", async () => {
    // The pictures show every status.
    if (SHOTS) await timedOut$;
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
      const page = await open(context, "/console/");
      const errors = watchErrors(page);
      for (const [name, path, ready] of pages) {
        await go(page, path);
        await page.locator(ready).first().waitFor();
        const { scroll, inner } = await overflow(page);
        expect(scroll, `${name} at ${size}`).toBeLessThanOrEqual(inner);
        if (name !== "not-found") await shot(page, `${name}-${size}`);
      }
      expect(errors).toEqual([]);
      await giveBack(page);
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
    await giveBack(page);
  });

  it("lists every status unclipped, as cards on the phone and a table on the desktop", async () => {
    await timedOut$;
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
      await giveBack(page);
    }
  });

  it("finds one execution among 500 by name prefix, with the search in the URL", async () => {
    await searchable;
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
    await Promise.all([giveBack(page), giveBack(shared)]);
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
    await giveBack(page);
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
    await giveBack(page);
  });

  it("stops with an error and a cause, and shows the API's answer", async () => {
    const id = await start("nap", "to-stop");
    const page = await open(desktop, `/console/executions/${enc(id)}`);
    await page.locator('[data-state="Nap"][data-status="running"]').waitFor();
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
    await giveBack(page);
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
    await giveBack(page);
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
    await giveBack(page);
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

  for (const [size, options] of [
    ["desktop", () => desktop],
    ["phone", () => phone],
  ] as const) {
    it(`stops what a filtered list shows, with its progress, and nothing else (${size})`, async () => {
      const prefix = `inc-${size}-`;
      // Three in the filter; beside them one of a name the prefix leaves out.
      const hit = await Promise.all([0, 1, 2].map((i) => start("nap", `${prefix}${i}`)));
      const spared = await start("nap", `inc-${size}x`);
      const page = await open(options(), `/console/executions?q=${prefix}&stateMachine=nap`);
      const errors = watchErrors(page);
      const stop = page.locator('[data-bulk="stop"]');
      await poll(() => stop.getAttribute("data-count")).toBe("3");
      expect(await stop.textContent()).toBe("Stop 3 running matching…");
      await stop.click();
      // The confirmation states the filter and the count before anything happens.
      const confirm = page.getByRole("alertdialog");
      await confirm.getByRole("heading", { name: "Stop 3 executions?" }).waitFor();
      const filter = await confirm.locator("[data-filter]").textContent();
      expect(filter).toContain(`name starts with “${prefix}”`);
      expect(filter).toContain("state machine nap");
      expect(filter).toContain("status RUNNING");
      await confirm.getByLabel("Stop cause").fill("bulk from the console");
      await shot(page, `executions-bulk-${size}`);
      expect((await overflow(page)).scroll).toBeLessThanOrEqual(size === "phone" ? 390 : 1440);
      await confirm.getByRole("button", { name: "Stop 3 executions" }).click();
      // Progress, from GET /v1/operations/:id, until it is done.
      const progress = page.locator("[data-operation]");
      await progress.locator("progress").waitFor();
      await page.locator('[data-operation-status="SUCCEEDED"]').waitFor();
      expect(await progress.getByRole("status").textContent()).toBe(
        "Stop finished: 3 done, 0 skipped, 0 failed (of 3 matched).",
      );
      const op = await stack.client.get(
        `/v1/operations/${await progress.getAttribute("data-operation")}`,
      );
      expect(op.body).toMatchObject({
        action: "stop",
        status: "SUCCEEDED",
        matched: 3,
        done: 3,
        filter: { namePrefix: prefix, stateMachine: "nap", status: "RUNNING" },
      });
      // The list shows the outcome; the API agrees; the spared ones still run.
      await poll(() => page.locator('tr[data-status="ABORTED"]').count()).toBe(3);
      const statusOf = async (id: string) =>
        (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
      for (const id of hit) {
        expect(await statusOf(id)).toMatchObject({
          status: "ABORTED",
          cause: "bulk from the console",
        });
      }
      expect((await statusOf(spared)).status).toBe("RUNNING");
      expect((await statusOf(ids.running!)).status).toBe("RUNNING");
      // Nothing left to stop: the bar says so.
      await page.getByRole("button", { name: "Close" }).click();
      await poll(() => stop.getAttribute("data-count")).toBe("0");
      expect(errors).toEqual([]);
      await giveBack(page);
    });

    it(`pauses, resumes and redrives only after a confirmation (${size})`, async () => {
      const id = await start("nap", `confirm-${size}`);
      const page = await open(options(), `/console/executions/${enc(id)}`);
      await page.locator('[data-state="Nap"][data-status="running"]').waitFor();
      const answer = (text: string) => page.getByRole("status").filter({ hasText: text });
      const dialogs: string[] = [];
      // Dismissed: nothing is sent, nothing changes.
      page.once("dialog", (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.getByRole("button", { name: "Pause", exact: true }).click();
      await poll(() => dialogs.length).toBe(1);
      expect(dialogs[0]).toMatch(/^Pause this execution\?/);
      expect((await stack.client.get(`/v1/executions/${enc(id)}`)).body.status).toBe("RUNNING");
      expect(await page.locator(".outcome").count()).toBe(0);
      // Accepted: the API's answer is shown.
      for (const [button, said, shows, status] of [
        ["Pause", /^Pause this execution\?/, "Pause: the execution is PAUSED", "PAUSED"],
        ["Resume", /^Resume this execution\?/, "Resume: the execution is RUNNING", "RUNNING"],
      ] as const) {
        page.once("dialog", (dialog) => {
          dialogs.push(dialog.message());
          void dialog.accept();
        });
        await page.getByRole("button", { name: button, exact: true }).click();
        await answer(shows).waitFor();
        expect(dialogs.at(-1)).toMatch(said);
        expect((await stack.client.get(`/v1/executions/${enc(id)}`)).body.status).toBe(status);
      }
      expect((await stack.client.post(`/v1/executions/${enc(id)}/stop`, {})).status).toBe(200);
      await page.locator("h1 .badge", { hasText: "ABORTED" }).waitFor();
      page.once("dialog", (dialog) => {
        dialogs.push(dialog.message());
        void dialog.accept();
      });
      await page.getByRole("button", { name: "Redrive", exact: true }).click();
      await answer("Redrive: the execution is RUNNING again").waitFor();
      expect(dialogs.at(-1)).toMatch(/^Redrive this ABORTED execution\?/);
      expect((await stack.client.get(`/v1/executions/${enc(id)}`)).body.status).toBe("RUNNING");
      await giveBack(page);
    });
  }
});
