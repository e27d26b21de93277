import type { MapState } from "../core/definition.js";
import { StatesError } from "../core/errors.js";
import { childScopesOf, openJoin } from "../flow/join.js";
import { io } from "../io/index.js";
import type { StepContext } from "../step-context.js";
import { batchItems } from "./map-batches.js";
import { childrenState, succeedChildren } from "./children.js";
import type { StateHandler } from "./handler.js";

function runtime(ctx: StepContext, message: string): StatesError {
  return new StatesError("States.Runtime", `${ctx.causePrefix()} ${message}`);
}

function start(ctx: StepContext, state: MapState): void {
  const lang = io(ctx, state);
  const raw = ctx.frame.input;
  if (state.ResultWriter) {
    throw new StatesError(
      "States.ResultWriterFailed",
      `${ctx.causePrefix()} ResultWriter is not supported by Stepwise: results are returned as the state's output.`,
    );
  }
  const { items, effective } = lang.mapItems(ctx, state, raw);
  const maxConcurrency = lang.number(ctx, state, "MaxConcurrency", raw) ?? 0;
  // HISTORY_FORMAT_AWS: AWS reads the failure tolerance once the Map has started
  // (MapStateStarted, then the failure), as its recordings show.
  const tolerance = () => {
    const count = lang.number(ctx, state, "ToleratedFailureCount", raw);
    const percentage = lang.number(ctx, state, "ToleratedFailurePercentage", raw);
    if (count !== undefined && count < 0) {
      throw runtime(ctx, "ToleratedFailureCount cannot be negative.");
    }
    if (percentage !== undefined && (percentage < 0 || percentage > 100)) {
      throw runtime(ctx, "ToleratedFailurePercentage must be between 0 and 100.");
    }
    return { count, percentage };
  };
  const early = ctx.aws ? undefined : tolerance();
  const selected = items.map((item, i) => lang.mapItemInput(ctx, state, effective, item, i));
  const inputs = state.ItemBatcher ? batchItems(ctx, state, selected, raw) : selected;
  ctx.record("MapStateStarted", { length: inputs.length });
  const { count: toleratedFailureCount, percentage: toleratedFailurePercentage } =
    early ?? tolerance();
  const plan: Parameters<typeof openJoin>[1] = {
    inputs,
    maxConcurrency: Math.max(0, maxConcurrency),
  };
  if (toleratedFailureCount !== undefined) plan.toleratedFailureCount = toleratedFailureCount;
  if (toleratedFailurePercentage !== undefined) {
    plan.toleratedFailurePercentage = toleratedFailurePercentage;
  }
  const join = openJoin(ctx, plan, childScopesOf(ctx));
  ctx.setPhase({ kind: "children", join });
  if (join.total === 0) succeedChildren(ctx, state, []);
}

/**
 * Map: one child run per item of the input array (or per batch with ItemBatcher),
 * at most `MaxConcurrency` at once; the output lists the children's outputs in
 * item order. DISTRIBUTED mode over inline items behaves like INLINE here.
 */
export const map: StateHandler<MapState> = childrenState<MapState>({
  kind: "Map",
  start,
  failure: (verdict) =>
    verdict.exceededTolerance
      ? {
          error: "States.ExceedToleratedFailureThreshold",
          cause: "The specified tolerated failure threshold was exceeded",
        }
      : { error: verdict.error, cause: verdict.cause },
});
