import { startApprovalWebhooks, type ApprovalWebhooks } from "./approval-webhooks.js";
import type { RedisTarget } from "./redis.js";

/**
 * Starts the approval webhook relay when `STEPWISE_APPROVAL_WEBHOOK` is set (in
 * `stepwise serve` with its worker, and in `stepwise worker`). A webhook without
 * `STEPWISE_WEBHOOK_SECRET` is refused: an unsigned notification could be forged.
 */
export async function webhooksFromEnv(
  env: NodeJS.ProcessEnv,
  at: RedisTarget & { prefix: string; shards?: number; onError?: (err: unknown) => void },
): Promise<ApprovalWebhooks | undefined> {
  const url = env.STEPWISE_APPROVAL_WEBHOOK;
  if (!url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`STEPWISE_APPROVAL_WEBHOOK '${url}' is not a URL`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new Error("STEPWISE_APPROVAL_WEBHOOK must be an http(s) URL");
  }
  const secret = env.STEPWISE_WEBHOOK_SECRET;
  if (!secret || secret.length < 16) {
    throw new Error(
      "STEPWISE_APPROVAL_WEBHOOK needs STEPWISE_WEBHOOK_SECRET (16+ characters) to sign its requests",
    );
  }
  return startApprovalWebhooks({ ...at, url, secret });
}
