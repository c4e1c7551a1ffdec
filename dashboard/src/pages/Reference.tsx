import { useEffect, useState } from 'react';
import { loadSettings, type Settings } from '../api';
import { ErrorNote } from '../components/ErrorNote';

/** The REST mounts' OpenAPI documents, rendered by Swagger UI served from the platform itself. */
export function Reference() {
  const [settings, setSettings] = useState<Settings>();
  const [error, setError] = useState<string>();
  const [chosen, setChosen] = useState(0);
  useEffect(() => {
    loadSettings().then(setSettings, (failure: Error) => setError(failure.message));
  }, []);
  const document = settings?.openApi[chosen];
  return (
    <section className="wide">
      <h1>API reference</h1>
      <ErrorNote message={error} />
      {settings && (
        <>
          <p>
            The REST interfaces, with their OpenAPI documents. The GraphQL graph at <code>{settings.graphqlPath}</code> has its own explorer (<a href="#/explorer">GraphQL explorer</a>).
          </p>
          <ul className="tabs" role="list">
            {settings.openApi.map((entry, index) => (
              <li key={entry.url}>
                <button type="button" aria-pressed={index === chosen} onClick={() => setChosen(index)}>
                  {entry.title}
                </button>{' '}
                <a href={entry.url}>
                  <code>{entry.url}</code>
                </a>
              </li>
            ))}
          </ul>
          {document && <iframe className="reference" title={`${document.title} reference`} src={`reference.html?url=${encodeURIComponent(document.url)}`} />}
        </>
      )}
    </section>
  );
}
