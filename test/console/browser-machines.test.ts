import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, type Stack } from "../e2e/stack.js";
import {
  buildConsoleForTest,
  contextWithKey,
  screenshot,
  stackAndBrowser,
  watchErrors,
} from "./browser.js";

/**
 * The console in a real browser against the real service: sign in, a state
 * machine's graph, starting an execution from the form and following it live.
 */

/** Parallel, Map, Choice (rules and Default), Retry and Catch: what the graph must draw. */
const FAN = {
  StartAt: "Route",
  States: {
    Route: {
      Type: "Choice",
      Choices: [{ Variable: "$.count", NumericGreaterThan: 3, Next: "Many" }],
      Default: "Fan",
    },
    Many: { Type: "Pass", Result: "many", ResultPath: "$.note", Next: "Fan" },
    Fan: {
      Type: "Parallel",
      Branches: [
        { StartAt: "Left", States: { Left: { Type: "Pass", End: true } } },
        {
          StartAt: "Right",
          States: {
            Right: { Type: "Pass", Next: "RightDone" },
            RightDone: { Type: "Succeed" },
          },
        },
      ],
      ResultPath: "$.fan",
      Catch: [{ ErrorEquals: ["States.ALL"], Next: "Broken" }],
      Next: "Each",
    },
    Each: {
      Type: "Map",
      ItemsPath: "$.items",
      ItemProcessor: {
        StartAt: "Double",
        States: {
          Double: { Type: "Pass", Parameters: { "twice.$": "States.MathAdd($, $)" }, End: true },
        },
      },
      ResultPath: "$.doubled",
      End: true,
    },
    Broken: { Type: "Fail", Error: "Broken" },
  },
};

/** Every state name of a definition, nested ones included. */
function stateNames(scope: { States: Record<string, any> }): string[] {
  return Object.entries(scope.States).flatMap(([name, state]) => [
    name,
    ...(state.Branches ?? []).flatMap(stateNames),
    ...(state.ItemProcessor ? stateNames(state.ItemProcessor) : []),
  ]);
}

let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let built: Awaited<ReturnType<typeof buildConsoleForTest>>;

beforeAll(async () => {
  built = await buildConsoleForTest();
  [stack, browser] = await stackAndBrowser({ consoleDir: built.dir }, (s, b) => {
    if (s) stack = s;
    if (b) browser = b;
  });
  expect(
    (await stack.client.post("/v1/state-machines", { name: "fan", definition: FAN })).status,
  ).toBe(201);
  context = await contextWithKey(browser, KEYS.admin);
  // A bound for busy machines (three browser files start their services at once), not a delay.
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await built?.remove();
});

async function open(path: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(stack.url + path);
  return page;
}

describe("console: state machines and executions", () => {
  it("asks for an API key, then shows the state machines", async () => {
    const fresh = await contextWithKey(browser, null);
    const page = await fresh.newPage();
    const errors = watchErrors(page);
    await page.goto(`${stack.url}/console`);
    await page.getByLabel("API key").fill("not-a-key-of-this-service");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("The server does not know this API key.").waitFor();
    await page.getByLabel("API key").fill(KEYS.admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "fan" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/console/machines");
    await screenshot(page, "console-machines");
    expect(errors).toEqual([]);
    await fresh.close();
  });

  it("draws one node per state of a definition with a Parallel and a Map, with labelled edges", async () => {
    const page = await open("/console/machines/fan");
    await page.locator("svg.graph [data-state]").first().waitFor();
    const drawn = await page
      .locator("svg.graph [data-state]")
      .evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-state")));
    expect(drawn.sort()).toEqual(stateNames(FAN).sort());
    const edges = await page
      .locator("svg.graph [data-edge-kind]")
      .evaluateAll((nodes) =>
        nodes.map((n) => [n.getAttribute("data-edge-kind"), n.getAttribute("data-edge-label")]),
      );
    expect(edges).toContainEqual(["choice", "$.count > 3"]);
    expect(edges).toContainEqual(["default", "Default"]);
    expect(edges).toContainEqual(["catch", "States.ALL"]);
    const dash = await page
      .locator('svg.graph [data-edge-kind="catch"] path')
      .evaluate((p) => (globalThis as any).getComputedStyle(p).strokeDasharray as string);
    expect(dash).not.toBe("none");
    await screenshot(page, "console-machine-graph");
    await page.close();
  });

  it("refuses input that is not JSON, then starts an execution and follows it to SUCCEEDED", async () => {
    const page = await open("/console/machines/fan");
    const errors = watchErrors(page);
    const input = page.getByLabel("Input (JSON)");
    await input.fill('{"count": 5, "items": [1, 2, 3],}');
    await page.getByRole("button", { name: "Start execution" }).click();
    await page.getByRole("alert").filter({ hasText: "The input is not valid JSON" }).waitFor();
    expect((await stack.client.get("/v1/executions?stateMachine=fan")).body.items).toEqual([]);

    await input.fill('{"count": 5, "items": [1, 2, 3]}');
    await page.getByRole("button", { name: "Start execution" }).click();
    await page.waitForURL(/\/console\/executions\/.+/);
    await page.locator("h1 .badge", { hasText: "SUCCEEDED" }).waitFor({ timeout: 15_000 });
    const executionId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
    const record = await stack.client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    expect(record.body).toMatchObject({
      status: "SUCCEEDED",
      input: { count: 5, items: [1, 2, 3] },
    });

    // Coloured from the history: the taken path succeeded, the Catch target was never reached.
    await page.locator('[data-state="Double"][data-status="succeeded"]').waitFor();
    const status = (name: string) =>
      page.locator(`svg.graph [data-state="${name}"]`).getAttribute("data-status");
    for (const name of ["Route", "Many", "Fan", "Left", "Right", "RightDone", "Each", "Double"]) {
      expect(await status(name), name).toBe("succeeded");
    }
    expect(await status("Broken")).toBe("not-reached");

    // Clicking a state shows its input and output; the timeline has every event.
    await page.locator('svg.graph [data-state="Many"]').click();
    const detail = page.locator('[data-detail-state="Many"]');
    await detail.getByText('"many"').waitFor();
    const history = await stack.client.get(
      `/v1/executions/${encodeURIComponent(executionId)}/history?limit=1000`,
    );
    expect(await page.locator(".timeline li").count()).toBe(history.body.items.length);
    // An event in the timeline chooses that very entry: the second of three Map iterations.
    await page
      .locator(".timeline")
      .getByRole("button", { name: "PassStateEntered Double" })
      .nth(1)
      .click();
    await page.locator('[data-detail-state="Double"]').getByText("entry 2 of 3").waitFor();
    // The iteration picker chooses another one.
    await page
      .locator('[data-detail-state="Double"]')
      .getByLabel("Map iteration")
      .selectOption({ index: 2 });
    await page.locator('[data-detail-state="Double"]').getByText("entry 3 of 3").waitFor();
    // A Parallel's branch picker shows the state a branch is at.
    // (The keyboard: a state is focusable, and Enter chooses it.)
    await page.locator('svg.graph [data-state="Fan"]').press("Enter");
    await page
      .locator('[data-detail-state="Fan"]')
      .getByLabel("Branch")
      .selectOption({ label: "Branch 2: RightDone (succeeded)" });
    await page.locator('[data-detail-state="RightDone"]').waitFor();
    await screenshot(page, "console-execution");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("lists executions newest first and filters them by status", async () => {
    for (const count of [1, 2]) {
      await stack.client.post("/v1/state-machines/fan/executions?wait=10", {
        input: { count, items: [] },
      });
    }
    const page = await open("/console/executions?stateMachine=fan");
    await page.locator("tr[data-execution]").nth(2).waitFor();
    const listed = await page
      .locator("tr[data-execution]")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-execution")));
    const api = await stack.client.get("/v1/executions?stateMachine=fan");
    expect(listed).toEqual(api.body.items.map((e: { executionId: string }) => e.executionId));
    await page.getByLabel("Status").selectOption("FAILED");
    await page.getByText("No executions match.").waitFor();
    expect(new URL(page.url()).searchParams.get("status")).toBe("FAILED");
    await screenshot(page, "console-executions");
    await page.close();
  });
});
