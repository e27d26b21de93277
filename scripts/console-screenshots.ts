// The README's console pictures (docs/console-execution.png, docs/console-inbox.png),
// taken from the real service in Debian's Chromium at 1280×800.
// Run: npx tsx scripts/console-screenshots.ts
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildConsoleForTest, contextWithKey, launch } from "../test/console/browser.js";
import { API_KEYS, KEYS, startStack } from "../test/e2e/stack.js";

const DOCS = fileURLToPath(new URL("../docs/", import.meta.url));
const ALICE = "alice-secret-0123456789abcdef";

/** Every colour at once: a Choice, a Parallel, a Map, a retried and caught task, an approval. */
const ORDER = {
  Comment: "An order: check it, price it, try to charge the card, then ask a human.",
  StartAt: "Route",
  States: {
    Route: {
      Type: "Choice",
      Choices: [{ Variable: "$.total", NumericGreaterThan: 1000, Next: "Check" }],
      Default: "Express",
    },
    Express: { Type: "Pass", Next: "Check" },
    Check: {
      Type: "Parallel",
      Branches: [
        { StartAt: "Stock", States: { Stock: { Type: "Pass", End: true } } },
        { StartAt: "Fraud", States: { Fraud: { Type: "Pass", End: true } } },
      ],
      ResultPath: null,
      Next: "PriceLines",
    },
    PriceLines: {
      Type: "Map",
      ItemsPath: "$.lines",
      ItemProcessor: { StartAt: "Price", States: { Price: { Type: "Pass", End: true } } },
      ResultPath: null,
      Next: "Charge",
    },
    Charge: {
      Type: "Task",
      Resource: "arn:aws:states:::http:invoke",
      // Loopback is refused by the egress policy: a failure to retry, then catch.
      Parameters: { ApiEndpoint: "http://127.0.0.1:9/charge", Method: "POST" },
      Retry: [{ ErrorEquals: ["States.ALL"], MaxAttempts: 2, IntervalSeconds: 1 }],
      Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.chargeError", Next: "Approve" }],
      Next: "Done",
    },
    Approve: {
      Type: "Task",
      Resource: "arn:aws:states:::stepwise:approval.waitForTaskToken",
      Parameters: {
        "Subject.$":
          "States.Format('Charge failed: invoice order {} for {} EUR?', $.order, $.total)",
        "Details.$": "$",
        Approvers: ["finance"],
        Policy: "orders-v2",
        ExpiresInSeconds: 86400,
      },
      ResultPath: "$.approval",
      Next: "Done",
    },
    Done: { Type: "Succeed" },
  },
};

const built = await buildConsoleForTest();
const stack = await startStack({
  consoleDir: built.dir,
  apiKeys: `${API_KEYS},alice:approve:${ALICE}`,
  approverGroups: "alice=finance",
});
const browser = await launch();
try {
  await stack.client.post("/v1/state-machines", { name: "order", definition: ORDER });
  const started = await stack.client.post("/v1/state-machines/order/executions", {
    input: { order: "A-1042", total: 1299, lines: [{ sku: "desk" }, { sku: "lamp" }] },
  });
  const id = started.body.executionId as string;
  await stack.client.until(async () => {
    const r = await stack.client.get(`/v1/executions/${encodeURIComponent(id)}`);
    return r.body.pendingTasks?.length > 0 ? true : undefined;
  }, 20_000);

  const admin = await contextWithKey(browser, KEYS.admin);
  const page = await admin.newPage();
  await page.goto(`${stack.url}/console/executions/${encodeURIComponent(id)}`);
  await page.locator('[data-state="Approve"][data-status="running"]').waitFor();
  await page.locator('svg.graph [data-state="Charge"]').click();
  await page.locator('[data-detail-state="Charge"]').waitFor();
  await page.evaluate("window.scrollTo(0, 0)");
  // The page down to the end of the graph: the timeline below is in the tests' artifacts.
  const graph = await page.locator(".graph-card").boundingBox();
  await page.screenshot({
    path: join(DOCS, "console-execution.png"),
    clip: { x: 0, y: 0, width: 1280, height: Math.ceil(graph!.y + graph!.height + 16) },
    fullPage: true,
  });

  const approver = await contextWithKey(browser, ALICE);
  const inbox = await approver.newPage();
  await inbox.goto(`${stack.url}/console/approvals`);
  await inbox.locator("[data-approval]").first().waitFor();
  await inbox.screenshot({ path: join(DOCS, "console-inbox.png") });
  console.log(`wrote ${DOCS}console-execution.png and console-inbox.png`);
} finally {
  await browser.close();
  await stack.close();
  await built.remove();
}
