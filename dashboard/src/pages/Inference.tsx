import { useMemo, useState } from 'react';
import { gql, useQuery, useSubscription } from 'urql';
import { graphErrorMessage } from '../graphql';
import { ErrorNote } from '../components/ErrorNote';
import { LineChart, seriesColor } from '../components/LineChart';
import { BarList } from '../components/BarList';

const PROVIDER_FIELDS = 'id name status capabilities interfaces inFlight maxConcurrency modelCount coolingDownUntil';
const PROVIDERS = gql`query DashboardProviders { providers { ${PROVIDER_FIELDS} } }`;
const STATUS_CHANGED = gql`subscription DashboardProviderStatus { providerStatusChanged { ${PROVIDER_FIELDS} } }`;
const MODELS = gql`
  query DashboardModels {
    inferenceModels { id provider providers contextLength inputModalities status aliasOf }
  }
`;
const ANALYTICS = gql`
  query DashboardInferenceAnalytics($from: DateTime!, $to: DateTime!, $bucket: InferenceAnalyticsBucket) {
    inferenceAnalytics(from: $from, to: $to, bucket: $bucket, limit: 1) {
      usage { bucket truncated data { bucketStart provider model calls totalTokens promptTokens completionTokens errors } }
      performance { provider model calls succeeded serverErrors errorRate latencyP50Ms latencyP95Ms }
    }
  }
`;

interface Provider {
  id: string;
  name: string;
  status: 'OPERATIONAL' | 'DEGRADED' | 'DOWN';
  capabilities: string[];
  interfaces: string[];
  inFlight: number;
  maxConcurrency: number | null;
  modelCount: number;
  coolingDownUntil: string | null;
}
interface Model {
  id: string;
  provider: string;
  providers: string[];
  contextLength: number;
  inputModalities: string[];
  status: string;
  aliasOf: string | null;
}
interface Analytics {
  usage: { bucket: string; truncated: boolean; data: { bucketStart: string; provider: string; model: string; calls: number; totalTokens: number; errors: number }[] };
  performance: { provider: string; model: string; calls: number; serverErrors: number; errorRate: number; latencyP50Ms: number | null; latencyP95Ms: number | null }[];
}

const RANGES = { day: { hours: 24, bucket: 'HOUR' }, week: { hours: 168, bucket: 'HOUR' }, month: { hours: 720, bucket: 'DAY' } } as const;

export function Inference() {
  return (
    <section>
      <h1>Inference</h1>
      <Providers />
      <Analytics />
      <Models />
    </section>
  );
}

function Providers() {
  const [{ data, error }] = useQuery<{ providers: Provider[] }>({ query: PROVIDERS });
  // Each change the subscription delivers replaces that provider's row: the page never reloads.
  const [live] = useSubscription<{ providerStatusChanged: Provider }, Record<string, Provider>>({ query: STATUS_CHANGED }, (seen = {}, event) => ({
    ...seen,
    [event.providerStatusChanged.id]: event.providerStatusChanged,
  }));
  const providers = (data?.providers ?? []).map((provider) => live.data?.[provider.id] ?? provider);
  return (
    <>
      <h2>Providers</h2>
      <ErrorNote message={graphErrorMessage(error ?? live.error)} />
      <p className="hint" role="status">
        {live.error ? 'Live status is not connected.' : 'Status updates live.'}
      </p>
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Inference providers</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Status</th>
              <th scope="col">Capabilities</th>
              <th scope="col">In flight</th>
              <th scope="col">Models</th>
            </tr>
          </thead>
          <tbody>
            {providers.map((provider) => (
              <tr key={provider.id} data-provider={provider.id}>
                <th scope="row">{provider.name}</th>
                <td>
                  <span className={`status status-${provider.status.toLowerCase()}`} data-testid={`provider-status-${provider.id}`}>
                    {provider.status.toLowerCase()}
                  </span>
                  {provider.coolingDownUntil && <span className="hint"> cooling down until {new Date(provider.coolingDownUntil).toLocaleTimeString()}</span>}
                </td>
                <td>{provider.capabilities.join(', ')}</td>
                <td>
                  {provider.inFlight}
                  {provider.maxConcurrency ? ` / ${provider.maxConcurrency}` : ''}
                </td>
                <td>{provider.modelCount}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function Analytics() {
  const [range, setRange] = useState<keyof typeof RANGES>('day');
  // The window is fixed when the range is picked, so the query's variables stay stable between renders.
  const variables = useMemo(() => {
    const to = new Date();
    const from = new Date(to.getTime() - RANGES[range].hours * 3_600_000);
    return { from: from.toISOString(), to: to.toISOString(), bucket: RANGES[range].bucket };
  }, [range]);
  const [{ data, error }] = useQuery<{ inferenceAnalytics: Analytics }>({ query: ANALYTICS, variables });
  const chartWindow = useMemo((): [number, number] => [Date.parse(variables.from) / 1000, Date.parse(variables.to) / 1000], [variables]);
  const analytics = data?.inferenceAnalytics;
  const charts = useMemo(() => {
    if (!analytics) return undefined;
    const times = [...new Set(analytics.usage.data.map((row) => Date.parse(row.bucketStart) / 1000))].sort((a, b) => a - b);
    const index = new Map(times.map((time, i) => [time, i]));
    const pairs = [...new Set(analytics.usage.data.map((row) => `${row.provider} / ${row.model}`))];
    const perPair = (pick: (row: Analytics['usage']['data'][number]) => number) =>
      pairs.map((pair, i) => {
        const values: (number | null)[] = times.map(() => 0);
        for (const row of analytics.usage.data) if (`${row.provider} / ${row.model}` === pair) values[index.get(Date.parse(row.bucketStart) / 1000)!]! += pick(row);
        return { label: pair, values, color: seriesColor(i) };
      });
    return { times, calls: perPair((row) => row.calls), tokens: perPair((row) => row.totalTokens), errors: perPair((row) => row.errors) };
  }, [analytics]);
  return (
    <>
      <h2>Analytics</h2>
      <label htmlFor="inference-range">Window</label>{' '}
      <select id="inference-range" value={range} onChange={(event) => setRange(event.target.value as keyof typeof RANGES)}>
        <option value="day">last 24 hours</option>
        <option value="week">last 7 days</option>
        <option value="month">last 30 days</option>
      </select>
      <ErrorNote message={graphErrorMessage(error)} />
      {analytics && charts && (
        <>
          {analytics.usage.truncated && <p className="hint">Only the first 10,000 rows are shown: pick a shorter window.</p>}
          {charts.times.length === 0 ? (
            <p>No inference calls in this window.</p>
          ) : (
            <>
              <LineChart title="Calls by provider and model" times={charts.times} series={charts.calls} window={chartWindow} />
              <LineChart title="Tokens by provider and model" times={charts.times} series={charts.tokens} window={chartWindow} />
              <LineChart title="Errors by provider and model" times={charts.times} series={charts.errors} window={chartWindow} />
            </>
          )}
          <div className="chart-grid">
            <BarList title="Latency p50 (ms)" rows={analytics.performance.filter((row) => row.latencyP50Ms !== null).map((row) => ({ label: `${row.provider} / ${row.model}`, value: Math.round(row.latencyP50Ms!) }))} unit=" ms" />
            <BarList title="Latency p95 (ms)" rows={analytics.performance.filter((row) => row.latencyP95Ms !== null).map((row) => ({ label: `${row.provider} / ${row.model}`, value: Math.round(row.latencyP95Ms!) }))} unit=" ms" />
            <BarList title="Server errors" rows={analytics.performance.map((row) => ({ label: `${row.provider} / ${row.model}`, value: row.serverErrors }))} />
          </div>
        </>
      )}
    </>
  );
}

function Models() {
  const [{ data, error }] = useQuery<{ inferenceModels: Model[] }>({ query: MODELS });
  return (
    <>
      <h2>Models</h2>
      <ErrorNote message={graphErrorMessage(error)} />
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Models served</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Providers</th>
              <th scope="col">Context</th>
              <th scope="col">Input</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {data?.inferenceModels.length === 0 && (
              <tr>
                <td colSpan={5}>No models listed by the providers.</td>
              </tr>
            )}
            {data?.inferenceModels.map((model) => (
              <tr key={`${model.id} ${model.provider}`}>
                <td>
                  {model.id}
                  {model.aliasOf ? <span className="hint"> (alias of {model.aliasOf})</span> : null}
                </td>
                <td>{model.providers.join(', ')}</td>
                <td>{model.contextLength.toLocaleString()}</td>
                <td>{model.inputModalities.join(', ')}</td>
                <td>{model.status.toLowerCase()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
