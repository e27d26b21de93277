// The console's budget: gzipped asset size, and how fast the approval inbox paints.
// Run: npx tsx bench/console.ts [pending approvals, default 100] [runs, default 5].
// Builds the console, starts the whole service (real Redis under a random prefix,
// removed at the end), parks N approvals, and loads /console/approvals in Debian's
// Chromium (/usr/bin/chromium) with a fresh browser context per run (no cache).
// Targets: at most 500 KB gzipped; the inbox painted in under 1 s.
import { buildConsoleForTest, contextWithKey, launch } from "../test/console/browser.js";
import { KEYS, startStack } from "../test/e2e/stack.js";

const N = Number(process.argv[2] ?? 100);
const RUNS = Number(process.argv[3] ?? 5);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const ms = (v: number) => `${v.toFixed(0)} ms`;

const built = await buildConsoleForTest();
const stack = await startStack({ consoleDir: built.dir });
const browser = await launch();
try {
  const total = built.files.reduce((sum, f) => sum + f.gzipBytes, 0);
  for (const f of built.files)
    console.log(`${f.name.padEnd(24)} ${f.bytes} bytes, ${f.gzipBytes} gzipped`);
  console.log(`assets: ${(total / 1024).toFixed(1)} KiB gzipped in all (budget 500 KB)`);

  await stack.client.post("/v1/state-machines", {
    name: "bench-pay",
    definition: {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "stepwise:approval",
          Parameters: { "Subject.$": "States.Format('Pay invoice {}', $.n)", "Details.$": "$" },
          End: true,
        },
      },
    },
  });
  for (let i = 0; i < N; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, N - i) }, (_, j) =>
        stack.client.post("/v1/state-machines/bench-pay/executions", {
          input: { n: i + j, amount: 100 + j, payee: "ACME" },
        }),
      ),
    );
  }
  await stack.client.until(async () => {
    const page = await stack.client.get("/v1/approvals?status=PENDING&limit=1000");
    return page.body.items.length >= N ? true : undefined;
  }, 60_000);

  const paint: number[] = [];
  const inbox: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const context = await contextWithKey(browser, KEYS.admin);
    const page = await context.newPage();
    await page.goto(`${stack.url}/console/approvals`);
    await page.locator("[data-approval]").first().waitFor();
    // Both relative to the navigation's start, read inside the page.
    const [fcp, ready] = (await page.evaluate(
      "[performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN, performance.now()]",
    )) as [number, number];
    paint.push(fcp);
    inbox.push(ready);
    await context.close();
  }
  console.log(
    `first contentful paint: median ${ms(median(paint))}, max ${ms(Math.max(...paint))} (${RUNS} cold loads)`,
  );
  console.log(
    `inbox with ${N} pending approvals shown: median ${ms(median(inbox))}, max ${ms(Math.max(...inbox))} (target < 1 s)`,
  );
} finally {
  await browser.close();
  await stack.close();
  await built.remove();
}
