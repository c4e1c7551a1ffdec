import { useRef, useState, type FormEvent } from 'react';
import { gql, useMutation, useQuery } from 'urql';
import { useSignedIn } from '../session';
import { graphErrorMessage } from '../graphql';
import { ErrorNote } from '../components/ErrorNote';
import { CopyButton } from '../components/CopyButton';

const KEYS = gql`
  query DashboardApiKeys {
    apiKeys {
      id
      kind
      name
      prefix
      livemode
      createdAt
      disabledAt
      expiresAt
      lastUsedAt
    }
  }
`;
const CREATE = gql`
  mutation DashboardCreateApiKey($kind: MembershipKeyKind!, $name: String) {
    createApiKey(kind: $kind, name: $name) {
      id
      prefix
      name
      secret
    }
  }
`;
const REVOKE = gql`
  mutation DashboardRevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) {
      id
      disabledAt
    }
  }
`;

interface ApiKey {
  id: string;
  kind: string;
  name: string | null;
  prefix: string;
  livemode: boolean;
  createdAt: string;
  disabledAt: string | null;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export function ApiKeys() {
  const { user, account, mode } = useSignedIn();
  const [{ data, fetching, error }, refetch] = useQuery<{ apiKeys: ApiKey[] }>({ query: KEYS });
  const canManage = user.role !== 'viewer';
  // The account's keys of this mode only: live and test are never shown together.
  const keys = (data?.apiKeys ?? []).filter((key) => key.kind === mode);
  const active = (data?.apiKeys ?? []).filter((key) => status(key) === 'active' && account.keyCap.kinds.includes(key.kind)).length;

  return (
    <section>
      <h1>API keys ({mode})</h1>
      <p>
        Keys in use: <strong>{active}</strong> of <strong>{account.keyCap.max}</strong> allowed for the account (live and test together).
      </p>
      {canManage ? <CreateKey onCreated={() => refetch({ requestPolicy: 'network-only' })} /> : <p className="hint">Viewers can see keys but not create or revoke them.</p>}
      <ErrorNote message={graphErrorMessage(error)} />
      {fetching && !data ? <p role="status">Loading keys…</p> : null}
      <div className="table-wrap">
        <table className="stack">
          <caption className="visually-hidden">{mode} API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              {canManage && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {keys.length === 0 && (
              <tr>
                <td colSpan={canManage ? 6 : 5}>No {mode} keys yet.</td>
              </tr>
            )}
            {keys.map((key) => (
              <KeyRow key={key.id} apiKey={key} canManage={canManage} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function KeyRow({ apiKey, canManage }: { apiKey: ApiKey; canManage: boolean }) {
  const [{ fetching, error }, revoke] = useMutation(REVOKE);
  const state = status(apiKey);
  const confirmRevoke = async () => {
    const label = apiKey.name ?? apiKey.prefix;
    if (!window.confirm(`Revoke the key "${label}"? Requests with it are refused from now on.`)) return;
    await revoke({ id: apiKey.id });
  };
  return (
    <tr>
      <td data-label="Name">{apiKey.name ?? <span className="hint">unnamed</span>}</td>
      <td data-label="Prefix">
        <code>{apiKey.prefix}…</code>
      </td>
      <td data-label="Created">{formatDate(apiKey.createdAt)}</td>
      {/* Recorded by the edge to the minute, once a minute per key. */}
      <td className={apiKey.lastUsedAt ? undefined : 'hint'} data-label="Last used">
        {apiKey.lastUsedAt ? formatDate(apiKey.lastUsedAt) : 'never'}
      </td>
      <td data-label="Status">
        <span className={`status status-${state}`}>{state}</span>
      </td>
      {canManage && (
        <td data-label="Actions">
          {state === 'active' && (
            <button type="button" className="danger" disabled={fetching} onClick={() => void confirmRevoke()} aria-label={`Revoke ${apiKey.name ?? apiKey.prefix}`}>
              Revoke
            </button>
          )}
          <ErrorNote message={graphErrorMessage(error)} />
        </td>
      )}
    </tr>
  );
}

function CreateKey({ onCreated }: { onCreated(): void }) {
  const { mode } = useSignedIn();
  const [name, setName] = useState('');
  const [{ fetching, error }, create] = useMutation<{ createApiKey: { id: string; prefix: string; name: string | null; secret: string } }>(CREATE);
  const [created, setCreated] = useState<{ secret: string; name: string | null }>();
  const secretRef = useRef<HTMLElement>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await create({ kind: mode.toUpperCase(), name: name.trim() || null });
    if (result.data) {
      setCreated({ secret: result.data.createApiKey.secret, name: result.data.createApiKey.name });
      setName('');
      onCreated();
      queueMicrotask(() => secretRef.current?.focus());
    }
  };

  return (
    <div className="card">
      <form onSubmit={(event) => void submit(event)} className="inline-form">
        <label htmlFor="key-name">New {mode} key name</label>
        <input id="key-name" value={name} maxLength={100} onChange={(event) => setName(event.target.value)} placeholder="e.g. production server" />
        <button type="submit" className="primary" disabled={fetching}>
          Create {mode} key
        </button>
      </form>
      <ErrorNote message={graphErrorMessage(error)} />
      {created && (
        <section className="secret" aria-labelledby="secret-title" tabIndex={-1} ref={secretRef}>
          <h2 id="secret-title">Your new key{created.name ? ` "${created.name}"` : ''}</h2>
          <p>Copy it now: it is shown only once and cannot be shown again.</p>
          <p>
            <code data-testid="new-secret">{created.secret}</code>
          </p>
          <CopyButton text={created.secret} label="Copy key" />
          <button type="button" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </section>
      )}
    </div>
  );
}

function status(key: ApiKey): 'active' | 'revoked' | 'expired' {
  if (key.disabledAt) return 'revoked';
  if (key.expiresAt && Date.parse(key.expiresAt) <= Date.now()) return 'expired';
  return 'active';
}

function formatDate(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
