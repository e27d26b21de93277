import type { SpanRecord } from "./spans.js";

/**
 * Where finished spans go. A worker without `OTEL_EXPORTER_OTLP_ENDPOINT` has
 * none, and every span-building call site is behind `if (sink)`: the tracing
 * code then builds no span and loads no OpenTelemetry module (the SDK is only
 * ever imported dynamically, below), so it costs nothing.
 */
export interface SpanSink {
  /** Hands finished spans to the exporter's batch; never throws, never waits. */
  emit(spans: readonly SpanRecord[]): void;
  /** Reports spans that could not be built (the engine goes on without them). */
  failed(err: unknown): void;
  /** Sends what is batched now. */
  flush(): Promise<void>;
  /** Sends what is batched and stops. */
  close(): Promise<void>;
}

export interface OtlpOptions {
  /**
   * The OTLP/HTTP base URL (as `OTEL_EXPORTER_OTLP_ENDPOINT`: traces go to
   * `<endpoint>/v1/traces`). Absent: the exporter reads the OTEL_* variables itself.
   */
  endpoint?: string;
  /** `service.name` when `OTEL_SERVICE_NAME` does not say (default `stepwise`). */
  serviceName?: string;
  /** Where export failures go (they never reach the engine). */
  onError?: (err: unknown) => void;
}

/** An OTLP/HTTP (JSON) exporter; the OpenTelemetry SDK is loaded here, on first use only. */
export async function otlpSink(options: OtlpOptions = {}): Promise<SpanSink> {
  const { createOtlpSink } = await import("./otlp.js");
  return createOtlpSink(options);
}
