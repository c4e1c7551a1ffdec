import { useEffect, useMemo, useState } from 'react';
import { api, ApiError, type Usage as UsageData } from '../api';
import { useSignedIn } from '../session';
import { LineChart, seriesColor } from '../components/LineChart';
import { BarList } from '../components/BarList';
import { ErrorNote } from '../components/ErrorNote';

type Range = 'hour' | 'day';

/** Requests per minute against the account's limit, for the mode the app is in. */
export function Usage() {
  const { mode } = useSignedIn();
  const [range, setRange] = useState<Range>('hour');
  const [usage, setUsage] = useState<UsageData>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    let current = true;
    const load = () =>
      api.usage(mode, range).then(
        (answer) => current && (setUsage(answer), setError(undefined)),
        (failure: unknown) => current && setError(failure instanceof ApiError ? failure.message : 'Usage could not be loaded.'),
      );
    void load();
    // The figures are batched at the edge for a few seconds; a refresh each 15 s keeps the chart current.
    const timer = setInterval(load, 15_000);
    return () => {
      current = false;
      clearInterval(timer);
    };
  }, [mode, range]);

  const chart = useMemo(() => {
    if (!usage) return undefined;
    const times = usage.series.map((point) => Date.parse(point.minute) / 1000);
    return {
      times,
      series: [
        { label: 'Requests', values: usage.series.map((point) => point.requests), color: seriesColor(0) },
        { label: `Limit (${usage.limitPerMinute}/min)`, values: usage.series.map(() => usage.limitPerMinute), color: '#5a5a5a', dash: [6, 4], reference: true },
        { label: '429s', values: usage.series.map((point) => point.rateLimited), color: seriesColor(1) },
        { label: '4xx', values: usage.series.map((point) => point.clientErrors), color: seriesColor(4) },
        { label: '5xx', values: usage.series.map((point) => point.serverErrors), color: seriesColor(3) },
      ],
    };
  }, [usage]);
  const totals = usage?.series.reduce(
    (sum, point) => ({ requests: sum.requests + point.requests, rateLimited: sum.rateLimited + point.rateLimited, peak: Math.max(sum.peak, point.requests) }),
    { requests: 0, rateLimited: 0, peak: 0 },
  );

  return (
    <section>
      <h1>Usage ({mode})</h1>
      <fieldset className="segmented">
        <legend>Range</legend>
        {(['hour', 'day'] as const).map((option) => (
          <label key={option}>
            <input type="radio" name="range" value={option} checked={range === option} onChange={() => setRange(option)} />
            Last {option}
          </label>
        ))}
      </fieldset>
      <ErrorNote message={error} />
      {usage && totals && chart && (
        <>
          <dl className="figures">
            <div>
              <dt>Requests</dt>
              <dd>{totals.requests.toLocaleString()}</dd>
            </div>
            <div>
              <dt>Busiest minute</dt>
              <dd>
                {totals.peak.toLocaleString()} of {usage.limitPerMinute.toLocaleString()}
              </dd>
            </div>
            <div>
              <dt>Rate limited (429)</dt>
              <dd>{totals.rateLimited.toLocaleString()}</dd>
            </div>
          </dl>
          <LineChart
            title={`Requests per minute, last ${range}`}
            times={chart.times}
            series={chart.series}
            summary={`${totals.requests} requests in the last ${range}, busiest minute ${totals.peak} against a limit of ${usage.limitPerMinute} per minute, ${totals.rateLimited} rate limited.`}
          />
          <BarList title="Answers by status" rows={usage.byStatus.map((row) => ({ label: String(row.status), value: row.count }))} />
          <h2>Slowest paths</h2>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Path</th>
                  <th scope="col">Requests</th>
                  <th scope="col">Average</th>
                  <th scope="col">Slowest</th>
                </tr>
              </thead>
              <tbody>
                {usage.slowestPaths.length === 0 && (
                  <tr>
                    <td colSpan={4}>No requests in this range.</td>
                  </tr>
                )}
                {usage.slowestPaths.map((row) => (
                  <tr key={`${row.method} ${row.path}`}>
                    <td>
                      <code>
                        {row.method} {row.path}
                      </code>
                    </td>
                    <td>{row.count}</td>
                    <td>{row.avgMs.toFixed(1)} ms</td>
                    <td>{row.maxMs.toFixed(0)} ms</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
