import { context, propagation, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

let provider: NodeTracerProvider | undefined;

/**
 * Exports this process's spans over OTLP/HTTP to `tracesUrl` (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
 * or OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces) and registers the W3C trace context
 * propagator. Once per process; without a URL nothing is registered and every span below is
 * OpenTelemetry's no-op, so an untraced platform pays nothing.
 */
export function startTracing(tracesUrl: string | undefined): void {
  if (!tracesUrl || provider) return;
  provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl }))] });
  provider.register();
}

/** Whether spans are recorded and exported in this process (startTracing was given a URL). */
export function tracingOn(): boolean {
  return provider !== undefined;
}

/** Sends every span ended so far (at a stop, and for tests). */
export async function flushTraces(): Promise<void> {
  await provider?.forceFlush();
}

/** The tracer of a service (`gateway`, `membership`, …): its name is the spans' instrumentation scope. */
export function tracerOf(service: string): Tracer {
  return trace.getTracer(service);
}

/** The context a request's W3C `traceparent` (and `tracestate`) header carries, or the active one. */
export function contextFromHeaders(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(context.active(), headers);
}

/** Writes the active span's `traceparent` into outgoing `headers`. */
export function injectTraceHeaders(headers: Record<string, string>): void {
  propagation.inject(context.active(), headers);
}

/**
 * Runs `work` inside a span of `tracer`, ending it when `work` settles; a throw marks it an error.
 */
export async function inSpan<T>(tracer: Tracer, name: string, options: { kind?: SpanKind; attributes?: Record<string, string | number> }, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Express middleware: a SERVER span per request, child of the client's `traceparent` when it
 * sends one, active while the request is handled (so subgraph fetches and SQL below are its
 * children), named by method and route template once answered.
 */
export function requestSpans(tracer: Tracer) {
  return (req: { method: string; path: string; headers: Record<string, string | string[] | undefined>; route?: { path?: unknown } }, res: { statusCode: number; once(event: 'finish' | 'close', listener: () => void): unknown }, next: () => void): void => {
    const parent = contextFromHeaders(req.headers);
    const span = tracer.startSpan(`${req.method} ${req.path}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': req.path } }, parent);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      span.setAttribute('http.response.status_code', res.statusCode);
      if (typeof req.route?.path === 'string') span.updateName(`${req.method} ${req.route.path}`);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    context.with(trace.setSpan(parent, span), next);
  };
}

export { SpanKind };
