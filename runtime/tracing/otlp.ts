import { SpanKind, SpanStatusCode, TraceFlags, type HrTime } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { OtlpOptions, SpanSink } from "./sink.js";
import type { SpanRecord } from "./spans.js";

/**
 * The OpenTelemetry SDK's own batch processor and OTLP/HTTP exporter, fed with
 * spans that are already finished. The SDK's tracer is not used: it would pick
 * span ids at random and time spans by this process's clock, while ours are
 * rebuilt from commits, with ids and times that must be the same whichever
 * worker builds them (span-ids.ts). Only imported by sink.ts, dynamically.
 */
export function createOtlpSink(options: OtlpOptions): SpanSink {
  const exporter = new OTLPTraceExporter(
    options.endpoint !== undefined
      ? { url: `${options.endpoint.replace(/\/+$/, "")}/v1/traces` }
      : {},
  );
  // OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES win over our default name.
  const resource = resourceFromAttributes({
    "service.name": options.serviceName ?? "stepwise",
  }).merge(detectResources({ detectors: [envDetector] }));
  const processor = new BatchSpanProcessor(exporter);
  const scope = { name: "stepwise" };
  const toReadable = (s: SpanRecord): ReadableSpan => {
    const context = { traceId: s.traceId, spanId: s.spanId, traceFlags: TraceFlags.SAMPLED };
    const startTime = hrTime(s.startMs);
    const endTime = hrTime(Math.max(s.endMs, s.startMs));
    return {
      name: s.name,
      kind: s.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
      spanContext: () => context,
      ...(s.parentSpanId !== undefined
        ? {
            parentSpanContext: {
              traceId: s.traceId,
              spanId: s.parentSpanId,
              traceFlags: TraceFlags.SAMPLED,
            },
          }
        : {}),
      startTime,
      endTime,
      duration: hrTime(Math.max(0, s.endMs - s.startMs)),
      status: s.error
        ? {
            code: SpanStatusCode.ERROR,
            ...(s.error.message !== undefined ? { message: s.error.message } : {}),
          }
        : { code: SpanStatusCode.UNSET },
      attributes: s.error ? { ...s.attributes, "error.type": s.error.type } : s.attributes,
      links: [],
      events: [],
      ended: true,
      resource,
      instrumentationScope: scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  };
  return {
    emit(spans) {
      for (const span of spans) {
        try {
          processor.onEnd(toReadable(span));
        } catch (err) {
          options.onError?.(err);
        }
      }
    },
    failed(err) {
      options.onError?.(err);
    },
    async flush() {
      await processor.forceFlush().catch((err: unknown) => options.onError?.(err));
    },
    async close() {
      await processor.forceFlush().catch((err: unknown) => options.onError?.(err));
      await processor.shutdown().catch((err: unknown) => options.onError?.(err));
    },
  };
}

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}
