import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { buildConsole, type BuiltFile } from "../../console/build.js";
import { startStack, type Stack, type StackOptions } from "../e2e/stack.js";

/**
 * Browser tests drive Debian's Chromium (never a downloaded browser) headless,
 * against the real service on 127.0.0.1. Each test file builds the console from
 * the current sources into a directory of its own, so a stale console/dist can
 * neither pass nor fail a run, and files never race on it.
 */

export const CHROMIUM = process.env.STEPWISE_CHROMIUM ?? "/usr/bin/chromium";
export const ARTIFACTS = fileURLToPath(new URL("../artifacts/", import.meta.url));

export async function buildConsoleForTest(): Promise<{
  dir: string;
  files: BuiltFile[];
  remove(): Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), "stepwise-console-"));
  const files = await buildConsole(dir);
  return { dir, files, remove: () => rm(dir, { recursive: true, force: true }) };
}

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * The service and the browser, started side by side. When one fails to start, the
 * other is still handed back to be closed (through `onStarted`) before the error is
 * thrown: with `Promise.all`, a browser that failed to launch left its `stepwise
 * serve` running, unowned, for hours after the test file had ended.
 */
export async function stackAndBrowser(
  options: StackOptions,
  onStarted: (stack: Stack | undefined, browser: Browser | undefined) => void,
): Promise<[Stack, Browser]> {
  const [stack, browser] = await Promise.allSettled([startStack(options), launch()]);
  onStarted(
    stack.status === "fulfilled" ? stack.value : undefined,
    browser.status === "fulfilled" ? browser.value : undefined,
  );
  if (stack.status === "rejected") throw stack.reason;
  if (browser.status === "rejected") throw browser.reason;
  return [stack.value, browser.value];
}

export const DESKTOP = { viewport: { width: 1280, height: 800 } };
/** The desktop: 1440×900. */
export const LARGE_DESKTOP = { viewport: { width: 1440, height: 900 } };
export const PHONE = {
  viewport: { width: 390, height: 844 },
  isMobile: true,
  hasTouch: true,
  deviceScaleFactor: 1,
};

/** A context whose tabs hold `key` in sessionStorage, as if it had been pasted once. */
export async function contextWithKey(
  browser: Browser,
  key: string | null,
  options: typeof DESKTOP | typeof LARGE_DESKTOP | typeof PHONE = DESKTOP,
): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  if (key !== null) {
    await context.addInitScript(
      `try { sessionStorage.setItem("stepwise.apiKey", ${JSON.stringify(key)}); } catch {}`,
    );
  }
  // Nothing but the service under test: any other request would mean a CDN slipped in.
  await context.route(
    (url) => url.hostname !== "127.0.0.1",
    (route) => route.abort(),
  );
  return context;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Collects page errors and failed requests: a test ends by asserting there were none. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    // The browser logs every 4xx it is answered; those are the API's words, not bugs.
    if (msg.type() === "error" && !msg.text().startsWith("Failed to load resource")) {
      errors.push(`console: ${msg.text()}`);
    }
  });
  return errors;
}

/** Moves an open console to another page as its links do (History API), without a reload. */
export async function go(page: Page, path: string): Promise<void> {
  await page.evaluate(
    `history.pushState(null, "", ${JSON.stringify(path)}); dispatchEvent(new Event("stepwise:navigate"));`,
  );
}

/** Where a pooled page rests between tests: a route of its own (the not-found page). */
const REST = "/console/~between-tests";

/**
 * The pages of one context, each lent to one test at a time and then kept. A page
 * that already runs the console goes to the next test's path through the History
 * API, as the console's own links do, instead of a new tab booting it again (a
 * renderer process, the bundle parsed and run, `GET /v1/me`), which is most of the
 * CPU a browser test costs. Between tests a page rests on a route that shows
 * nothing of any test, scrolled to the top, without the last test's listeners: no
 * view of one test can be taken for the next's. Concurrent tests get pages of
 * their own (the pool grows to as many as run at once).
 */
export class PagePool {
  private readonly idle: Page[] = [];

  constructor(
    private readonly context: BrowserContext,
    private readonly origin: string,
  ) {}

  async open(path: string): Promise<Page> {
    const page = this.idle.pop();
    if (page === undefined) {
      const fresh = await this.context.newPage();
      await fresh.goto(this.origin + path);
      return fresh;
    }
    await go(page, path);
    return page;
  }

  /** Takes a page back (instead of closing it). */
  async release(page: Page): Promise<void> {
    for (const event of ["console", "pageerror", "dialog", "request", "download"] as const) {
      page.removeAllListeners(event);
    }
    await go(page, REST);
    await page.getByRole("heading", { name: "Not found" }).waitFor();
    await page.evaluate("window.scrollTo(0, 0)");
    this.idle.push(page);
  }
}
