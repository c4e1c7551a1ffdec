import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, ApiError, type Invitation, type Role, type User } from '../api';
import { ErrorNote } from '../components/ErrorNote';
import { CopyButton } from '../components/CopyButton';

/** The account's users and invitations (owners only). */
export function Users() {
  const [list, setList] = useState<{ users: User[]; invitations: Invitation[] }>();
  const [error, setError] = useState<string>();
  const load = useCallback(() => {
    api.users().then(setList, (failure: unknown) => setError(failure instanceof ApiError ? failure.message : 'Users could not be loaded.'));
  }, []);
  useEffect(load, [load]);

  return (
    <section>
      <h1>Users</h1>
      <Invite onInvited={load} />
      <ErrorNote message={error} />
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Users of the account</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
            </tr>
          </thead>
          <tbody>
            {list?.users.map((user) => (
              <tr key={user.id}>
                <td>{user.name}</td>
                <td>{user.email}</td>
                <td>
                  {user.role}
                  {user.platformAdmin ? ', platform admin' : ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Invitations</h2>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {list?.invitations.length === 0 && (
              <tr>
                <td colSpan={3}>No invitations.</td>
              </tr>
            )}
            {list?.invitations.map((invitation) => (
              <tr key={invitation.id}>
                <td>{invitation.email}</td>
                <td>{invitation.role}</td>
                <td>
                  {invitation.acceptedAt
                    ? `accepted ${new Date(invitation.acceptedAt).toLocaleDateString()}`
                    : Date.parse(invitation.expiresAt) < Date.now()
                      ? 'expired'
                      : `open until ${new Date(invitation.expiresAt).toLocaleDateString()}`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Invite({ onInvited }: { onInvited(): void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('developer');
  const [error, setError] = useState<string>();
  const [link, setLink] = useState<string>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      const answer = await api.invite(email.trim(), role);
      setLink(new URL(answer.url, window.location.origin).toString());
      setEmail('');
      onInvited();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : 'The invitation failed.');
    }
  };
  return (
    <div className="card">
      <form onSubmit={(event) => void submit(event)} className="inline-form">
        <label htmlFor="invite-email">Email</label>
        <input id="invite-email" type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
        <label htmlFor="invite-role">Role</label>
        <select id="invite-role" value={role} onChange={(event) => setRole(event.target.value as Role)}>
          <option value="owner">owner</option>
          <option value="developer">developer</option>
          <option value="viewer">viewer</option>
        </select>
        <button type="submit" className="primary" disabled={!email}>
          Invite
        </button>
      </form>
      <ErrorNote message={error} />
      {link && (
        <section className="secret" aria-live="polite">
          <p>Send this link to the person invited. It is shown once and works for 7 days.</p>
          <p>
            <code data-testid="invitation-link">{link}</code>
          </p>
          <CopyButton text={link} label="Copy link" />
        </section>
      )}
    </div>
  );
}
