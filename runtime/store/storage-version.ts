import type { Redis } from "ioredis";
import type { Keys } from "./keys.js";

/**
 * The format of everything this runtime stores under a prefix: records, run
 * hashes, histories, journals, joins, the fields the scripts read. The first
 * worker on a fresh prefix writes it; a worker that finds another refuses to
 * start, before it could misread anything. A change that older data cannot be
 * read with raises it and ships its migration; readers of formats no release
 * ever wrote are not kept (issue 19: the pre-release join and run-state
 * readers went when this marker came).
 */
export const STORAGE_VERSION = 1;

export async function checkStorageVersion(redis: Redis, keys: Keys): Promise<void> {
  await redis.set(keys.storageVersion, STORAGE_VERSION, "NX");
  const stored = await redis.get(keys.storageVersion);
  if (stored !== String(STORAGE_VERSION)) {
    throw new Error(
      `the data under key prefix '${keys.bullPrefix}' is in storage version ${stored}; this Stepwise reads version ${STORAGE_VERSION} (run the version that wrote it, or its migration)`,
    );
  }
}
