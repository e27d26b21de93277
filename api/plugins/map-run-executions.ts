import { RuntimeError, type Runtime } from "../../runtime/contract/index.js";
import type { MapRuns } from "../../runtime/map-runs/map-run-store.js";
import { decodeCursor, encodeCursor } from "../../runtime/store/canonical.js";
import type * as Shapes from "../shapes.js";

/**
 * `GET /v1/executions?mapRun=`: a Distributed Map's child executions (one per item
 * or batch, runtime/map-runs/child-executions.ts), oldest first, the REST twin of
 * AWS's ListExecutions with `mapRunArn`. The Map Run is named by its ARN or its id.
 */
export async function mapRunExecutions(
  runtime: Runtime,
  mapRun: string,
  options: { status?: string; cursor?: string; limit?: number },
): Promise<Shapes.Page<Shapes.ExecutionSummary>> {
  const mapRuns = (runtime as { mapRuns?: MapRuns }).mapRuns;
  if (!mapRuns) throw new RuntimeError("InvalidRequest", "Map Runs need the Redis runtime");
  const id = mapRun.slice(mapRun.lastIndexOf(":") + 1);
  const record = await mapRuns.describe(id);
  if (!record || (mapRun.includes(":") && record.arn !== mapRun)) {
    throw new RuntimeError("InvalidRequest", `Map Run '${mapRun}' does not exist`);
  }
  const all = (await mapRuns.children(record)).filter(
    (e) => options.status === undefined || e.status === options.status,
  );
  let from = 0;
  if (options.cursor !== undefined) {
    const c = decodeCursor(options.cursor);
    if (!c || typeof c.o !== "number" || !Number.isInteger(c.o) || c.o < 0) {
      throw new RuntimeError("InvalidCursor", "The cursor is not valid");
    }
    from = c.o;
  }
  const limit = Math.max(1, Math.min(options.limit ?? 100, 1000));
  const items = all.slice(from, from + limit);
  const page: Shapes.Page<Shapes.ExecutionSummary> = { items };
  if (from + limit < all.length) page.nextCursor = encodeCursor({ o: from + limit });
  return page;
}
