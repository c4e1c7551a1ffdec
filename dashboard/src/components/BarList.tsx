/** A horizontal bar chart as a list: readable by screen readers and at any width. */
export function BarList({ title, rows, unit = '' }: { title: string; rows: { label: string; value: number }[]; unit?: string }) {
  const max = Math.max(1, ...rows.map((row) => row.value));
  return (
    <figure className="bars">
      <figcaption>{title}</figcaption>
      {rows.length === 0 ? (
        <p className="hint">No data in this range.</p>
      ) : (
        <ul>
          {rows.map((row) => (
            <li key={row.label}>
              <span className="bar-label">{row.label}</span>
              <span className="bar-track" aria-hidden="true">
                <span className="bar" style={{ width: `${(row.value / max) * 100}%` }} />
              </span>
              <span className="bar-value">
                {row.value.toLocaleString()}
                {unit}
              </span>
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
