import { once, EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushTraces } from '../../../core/telemetry/tracing.js';
import { inferenceConfigFrom } from '../../../subgraphs/inference/config/load-inference-config.js';
import { LoopbackOpenAiServer } from '../../support/loopback-openai-server.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

/** A span as OTLP/JSON carries it, with the instrumentation scope (the service) it came from. */
interface ReceivedSpan {
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string } }[];
}

const SERVER = 2;
const CLIENT = 3;

/** An OTLP/HTTP receiver (JSON encoding, as the exporter sends by default) keeping every span. */
class OtlpReceiver extends EventEmitter {
  readonly spans: ReceivedSpan[] = [];
  readonly contentTypes = new Set<string>();
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      this.contentTypes.add(String(req.headers['content-type']));
      const request = JSON.parse(body) as { resourceSpans: { scopeSpans: { scope: { name: string }; spans: Omit<ReceivedSpan, 'scope'>[] }[] }[] };
      for (const resource of request.resourceSpans) for (const scoped of resource.scopeSpans) for (const span of scoped.spans) this.spans.push({ ...span, scope: scoped.scope.name });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      this.emit('batch');
    });
  });

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let receiver: OtlpReceiver;
let platform: TestPlatform;
let vllm: LoopbackOpenAiServer;
const UPSTREAM_MODEL = 'traced-model';

beforeAll(async () => {
  receiver = new OtlpReceiver();
  const tracesUrl = await receiver.listen();
  vllm = await LoopbackOpenAiServer.start('vllm', [{ id: UPSTREAM_MODEL, contextLength: 4096 }]);
  const provider = { id: 'provider_a', name: 'A', engines: [{ type: 'openai-upstream', url: vllm.url, flavour: 'vllm' }] };
  const only = { providers: ['provider_a'] };
  const inference = inferenceConfigFrom({ providers: [provider], interfaces: { serviceT: only, serviceI: only, proxy: only, gateway: { ...only, defaultProvider: 'provider_a' } } }, null);
  platform = await startTestPlatform({ tracing: { tracesUrl }, inference });
}, 120_000);

afterAll(async () => {
  await platform?.close();
  await receiver?.close();
  await vllm?.close();
});

/** The spans of `traceId` once `done` holds of them; waits on the receiver's batches, flushing first. */
async function spansOf(traceId: string, done: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  for (;;) {
    const batch = once(receiver, 'batch');
    await flushTraces();
    const spans = receiver.spans.filter((span) => span.traceId === traceId);
    if (done(spans)) return spans;
    await batch;
  }
}

describe('OpenTelemetry traces over OTLP', () => {
  it("one GraphQL request's spans across the edge and two subgraphs share the client's trace, each service's span a child of the edge's fetch, its resolvers and SQL beneath", async () => {
    const key = await platform.issueKey('acct_traces');
    const created = await platform.request('/api/v1/members', { method: 'POST', key, json: { name: 'Ada', email: 'ada@example.org' } });
    expect(created.status).toBe(201);

    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpanId = '00f067aa0ba902b7';
    const response = await platform.request('/graphql', {
      method: 'POST',
      key,
      headers: { traceparent: `00-${traceId}-${clientSpanId}-01` },
      json: { query: '{ members(limit: 1) { data { id jobPostings { id } } } }' },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { errors?: unknown }).errors).toBeUndefined();

    const serverOf = (scope: string) => (spans: ReceivedSpan[]) => spans.find((span) => span.scope === scope && span.kind === SERVER);
    const spans = await spansOf(traceId, (all) => ['gateway', 'membership', 'marketplace'].every((scope) => serverOf(scope)(all)) && all.some((span) => span.name.startsWith('sql ')) && all.some((span) => span.name === 'resolve Query.members'));
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const ancestors = (span: ReceivedSpan) => {
      const chain: ReceivedSpan[] = [];
      for (let parent = span.parentSpanId && byId.get(span.parentSpanId); parent; parent = parent.parentSpanId && byId.get(parent.parentSpanId)) chain.push(parent);
      return chain;
    };

    // The edge honours the client's traceparent: its request span is the client span's child.
    const edge = serverOf('gateway')(spans)!;
    expect(edge.parentSpanId).toBe(clientSpanId);
    expect(spans.some((span) => span.scope === 'gateway' && span.name.startsWith('edge checks') && span.parentSpanId === edge.spanId)).toBe(true);

    for (const subgraph of ['membership', 'marketplace']) {
      const served = serverOf(subgraph)(spans)!;
      // The subgraph's request span is the child of the edge's CLIENT span for that fetch, under the edge's request.
      const fetch = byId.get(served.parentSpanId!);
      expect(fetch).toMatchObject({ scope: 'gateway', kind: CLIENT, name: `subgraph ${subgraph}` });
      expect(ancestors(fetch!)).toContain(edge);
    }
    // SQL statements are spans of the subgraph that ran them, under its request, without their parameters.
    const membershipServer = serverOf('membership')(spans)!;
    const statements = spans.filter((span) => span.scope === 'membership' && span.name.startsWith('sql ') && ancestors(span).includes(membershipServer));
    expect(statements.length).toBeGreaterThan(0);
    const texts = statements.map((span) => span.attributes?.find((attribute) => attribute.key === 'db.query.text')?.value.stringValue ?? '');
    expect(texts.some((text) => /select .* from "membership"\."member"/i.test(text))).toBe(true);
    expect(JSON.stringify(statements)).not.toContain('ada@example.org');
    // The root field's resolver, lightly: a span under the request that ran it.
    expect(spans.some((span) => span.scope === 'membership' && span.name === 'resolve Query.members' && span.parentSpanId === membershipServer.spanId)).toBe(true);
    expect(receiver.contentTypes).toEqual(new Set(['application/json']));
  });
  it("an inference request's call to its upstream is a CLIENT span under the edge's request, and the upstream gets its traceparent", async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const response = await platform.request('/inference/gateway/v1/chat/completions', {
      method: 'POST',
      headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
      json: { model: UPSTREAM_MODEL, messages: [{ role: 'user', content: 'Hello' }] },
    });
    expect(response.status).toBe(200);

    const upstreamSpan = (spans: ReceivedSpan[]) => spans.find((span) => span.scope === 'inference' && span.kind === CLIENT && span.name === 'inference upstream POST /v1/chat/completions');
    const spans = await spansOf(traceId, (all) => upstreamSpan(all) !== undefined && all.some((span) => span.scope === 'gateway' && span.kind === SERVER));
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const upstream = upstreamSpan(spans)!;
    const chain: ReceivedSpan[] = [];
    for (let parent = upstream.parentSpanId && byId.get(upstream.parentSpanId); parent; parent = parent.parentSpanId && byId.get(parent.parentSpanId)) chain.push(parent);
    expect(chain.some((span) => span.scope === 'gateway' && span.kind === SERVER)).toBe(true);
    expect(upstream.attributes).toEqual(expect.arrayContaining([{ key: 'gen_ai.request.model', value: { stringValue: UPSTREAM_MODEL } }, { key: 'inference.flavour', value: { stringValue: 'vllm' } }]));
    // vLLM continues the trace from the request's traceparent (its --otlp-traces-endpoint): the call span is its parent.
    const sent = vllm.requests.find((request) => request.path === '/v1/chat/completions');
    expect(sent?.headers.traceparent).toBe(`00-${traceId}-${upstream.spanId}-01`);
  });
});
