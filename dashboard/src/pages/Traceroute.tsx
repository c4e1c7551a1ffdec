import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { gql, useMutation, useQuery } from 'urql';
import { graphErrorMessage } from '../graphql';
import { api, type TracerouteKeyUse } from '../api';
import { ErrorNote } from '../components/ErrorNote';
import { CopyButton } from '../components/CopyButton';
import { BarList } from '../components/BarList';
import { LineChart, seriesColor } from '../components/LineChart';
import { CountryMap } from '../components/CountryMap';

const KEY_FIELDS = `id account name prefix hourlyLimit dailyLimit state createdAt disabledAt expiresAt`;
const KEYS = gql`
  query DashboardTracerouteKeys {
    tracerouteKeys { ${KEY_FIELDS} }
  }
`;
const ISSUE = gql`
  mutation DashboardIssueTracerouteKey($account: String!, $name: String, $hourlyLimit: Int, $dailyLimit: Int, $expiresAt: DateTime) {
    issueTracerouteKey(account: $account, name: $name, hourlyLimit: $hourlyLimit, dailyLimit: $dailyLimit, expiresAt: $expiresAt) {
      ${KEY_FIELDS}
      secret
    }
  }
`;
const DISABLE = gql`mutation DashboardDisableTracerouteKey($id: ID!) { disableTracerouteKey(id: $id) { ${KEY_FIELDS} } }`;
const ENABLE = gql`mutation DashboardEnableTracerouteKey($id: ID!) { enableTracerouteKey(id: $id) { ${KEY_FIELDS} } }`;
const EXPIRE = gql`mutation DashboardExpireTracerouteKey($id: ID!) { expireTracerouteKey(id: $id) { ${KEY_FIELDS} } }`;
const STATS = gql`
  query DashboardTraceStats($hours: Int) {
    traceStats(hours: $hours) {
      since
      until
      total
      byDirection { key count }
      byStatus { key count }
      anomalyDistribution { key count }
      topAsns { asn asName count }
      topProbeCities { city country count }
      topTargetCities { city country count }
      perHour { hour count }
    }
  }
`;

interface TracerouteKey {
  id: string;
  account: string;
  name: string | null;
  prefix: string;
  hourlyLimit: number;
  dailyLimit: number;
  state: 'ACTIVE' | 'DISABLED' | 'EXPIRED';
  createdAt: string;
  disabledAt: string | null;
  expiresAt: string | null;
}
interface Count {
  key: string;
  count: number;
}
interface CityCount {
  city: string;
  country: string | null;
  count: number;
}
interface TraceStats {
  total: number;
  byDirection: Count[];
  byStatus: Count[];
  anomalyDistribution: Count[];
  topAsns: { asn: number; asName: string | null; count: number }[];
  topProbeCities: CityCount[];
  topTargetCities: CityCount[];
  perHour: { hour: string; count: number }[];
}

/** The observatory's admin area: its keys and its statistics. */
export function Traceroute() {
  return (
    <section>
      <h1>Traceroute admin</h1>
      <Keys />
      <Stats />
    </section>
  );
}

function Keys() {
  const [{ data, error, fetching }, refetch] = useQuery<{ tracerouteKeys: TracerouteKey[] }>({ query: KEYS });
  // Each key's use in its current windows, read from the edge's counters (refreshed every 30 s).
  const [use, setUse] = useState<Map<string, TracerouteKeyUse>>(new Map());
  useEffect(() => {
    let live = true;
    const load = () =>
      api
        .tracerouteKeyUse()
        .then(({ keys }) => live && setUse(new Map(keys.map((row) => [row.id, row]))))
        .catch(() => undefined);
    void load();
    const timer = setInterval(load, 30_000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [data]);
  return (
    <>
      <h2>Keys</h2>
      <IssueKey onIssued={() => refetch({ requestPolicy: 'network-only' })} />
      <ErrorNote message={graphErrorMessage(error)} />
      {fetching && !data ? <p role="status">Loading keys…</p> : null}
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Traceroute keys</caption>
          <thead>
            <tr>
              <th scope="col">Account</th>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Used this hour / today</th>
              <th scope="col">Expires</th>
              <th scope="col">State</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {data?.tracerouteKeys.length === 0 && (
              <tr>
                <td colSpan={7}>No traceroute keys yet.</td>
              </tr>
            )}
            {data?.tracerouteKeys.map((key) => <KeyRow key={key.id} tracerouteKey={key} use={use.get(key.id)} />)}
          </tbody>
        </table>
      </div>
    </>
  );
}

function KeyRow({ tracerouteKey: key, use }: { tracerouteKey: TracerouteKey; use: TracerouteKeyUse | undefined }) {
  const [disabled, disable] = useMutation(DISABLE);
  const [enabled, enable] = useMutation(ENABLE);
  const [expired, expire] = useMutation(EXPIRE);
  const busy = disabled.fetching || enabled.fetching || expired.fetching;
  const label = key.name ?? key.prefix;
  return (
    <tr>
      <td>{key.account}</td>
      <td>{key.name ?? <span className="hint">unnamed</span>}</td>
      <td>
        <code>{key.prefix}…</code>
      </td>
      <td data-testid={`traceroute-use-${key.id}`}>
        {(use?.hourly.used ?? 0).toLocaleString()} of {key.hourlyLimit.toLocaleString()} / {(use?.daily.used ?? 0).toLocaleString()} of {key.dailyLimit.toLocaleString()}
      </td>
      <td>{key.expiresAt ? new Date(key.expiresAt).toLocaleString() : 'never'}</td>
      <td>
        <span className={`status status-${key.state.toLowerCase()}`}>{key.state.toLowerCase()}</span>
      </td>
      <td className="actions">
        {key.state === 'ACTIVE' && (
          <button type="button" disabled={busy} onClick={() => void disable({ id: key.id })} aria-label={`Disable ${label}`}>
            Disable
          </button>
        )}
        {key.state === 'DISABLED' && (
          <button type="button" disabled={busy} onClick={() => void enable({ id: key.id })} aria-label={`Enable ${label}`}>
            Enable
          </button>
        )}
        {key.state !== 'EXPIRED' && (
          <button
            type="button"
            className="danger"
            disabled={busy}
            aria-label={`Expire ${label} now`}
            onClick={() => window.confirm(`Expire the key "${label}" now?`) && void expire({ id: key.id })}
          >
            Expire
          </button>
        )}
        <ErrorNote message={graphErrorMessage(disabled.error ?? enabled.error ?? expired.error)} />
      </td>
    </tr>
  );
}

function IssueKey({ onIssued }: { onIssued(): void }) {
  const [form, setForm] = useState({ account: '', name: '', hourlyLimit: '100', dailyLimit: '2000', expiresAt: '' });
  const [{ fetching, error }, issue] = useMutation<{ issueTracerouteKey: TracerouteKey & { secret: string } }>(ISSUE);
  const [secret, setSecret] = useState<string>();
  const field = (name: keyof typeof form) => ({
    id: `issue-${name}`,
    value: form[name],
    onChange: (event: { target: { value: string } }) => setForm({ ...form, [name]: event.target.value }),
  });
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await issue({
      account: form.account.trim(),
      name: form.name.trim() || null,
      hourlyLimit: Number(form.hourlyLimit),
      dailyLimit: Number(form.dailyLimit),
      expiresAt: form.expiresAt ? new Date(form.expiresAt).toISOString() : null,
    });
    if (result.data) {
      setSecret(result.data.issueTracerouteKey.secret);
      onIssued();
    }
  };
  return (
    <div className="card">
      <form onSubmit={(event) => void submit(event)} className="grid-form">
        <label htmlFor="issue-account">Account</label>
        <input {...field('account')} required />
        <label htmlFor="issue-name">Key name</label>
        <input {...field('name')} />
        <label htmlFor="issue-hourlyLimit">Requests per hour</label>
        <input {...field('hourlyLimit')} type="number" min={1} required />
        <label htmlFor="issue-dailyLimit">Requests per day</label>
        <input {...field('dailyLimit')} type="number" min={1} required />
        <label htmlFor="issue-expiresAt">Expires (optional)</label>
        <input {...field('expiresAt')} type="datetime-local" />
        <button type="submit" className="primary" disabled={fetching || !form.account}>
          Issue key
        </button>
      </form>
      <ErrorNote message={graphErrorMessage(error)} />
      {secret && (
        <section className="secret" aria-live="polite">
          <p>The new key, shown once:</p>
          <p>
            <code data-testid="traceroute-secret">{secret}</code>
          </p>
          <CopyButton text={secret} label="Copy key" />
        </section>
      )}
    </div>
  );
}

function Stats() {
  const [hours, setHours] = useState(24);
  const [{ data, error }] = useQuery<{ traceStats: TraceStats }>({ query: STATS, variables: { hours } });
  const stats = data?.traceStats;
  const perHour = useMemo(
    () =>
      stats && {
        times: stats.perHour.map((point) => Date.parse(point.hour) / 1000),
        series: [{ label: 'Traces', values: stats.perHour.map((point) => point.count), color: seriesColor(0) }],
      },
    [stats],
  );
  const countries = (cities: CityCount[]) => {
    const counts = new Map<string, number>();
    for (const city of cities) if (city.country) counts.set(city.country, (counts.get(city.country) ?? 0) + city.count);
    return counts;
  };
  return (
    <>
      <h2>Observatory statistics</h2>
      <label htmlFor="stats-hours">Window</label>{' '}
      <select id="stats-hours" value={hours} onChange={(event) => setHours(Number(event.target.value))}>
        <option value={24}>last 24 hours</option>
        <option value={168}>last 7 days</option>
        <option value={720}>last 30 days</option>
      </select>
      <ErrorNote message={graphErrorMessage(error)} />
      {stats && perHour && (
        <>
          <p>
            <strong>{stats.total.toLocaleString()}</strong> traces in the window.
          </p>
          <LineChart title="Traces per hour" times={perHour.times} series={perHour.series} summary={`${stats.total} traces, ${stats.perHour.length} hours with traces`} />
          <div className="chart-grid">
            <BarList title="By direction" rows={stats.byDirection.map((row) => ({ label: row.key, value: row.count }))} />
            <BarList title="By status" rows={stats.byStatus.map((row) => ({ label: row.key, value: row.count }))} />
            <BarList title="Anomaly score distribution" rows={stats.anomalyDistribution.map((row) => ({ label: row.key, value: row.count }))} />
            <BarList title="Top probe ASNs" rows={stats.topAsns.map((row) => ({ label: `AS${row.asn}${row.asName ? ` ${row.asName}` : ''}`, value: row.count }))} />
          </div>
          <CountryMap probes={countries(stats.topProbeCities)} targets={countries(stats.topTargetCities)} />
        </>
      )}
    </>
  );
}
