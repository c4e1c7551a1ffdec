import { useState, type FormEvent } from 'react';
import { useParams } from 'react-router';
import { api, ApiError } from '../api';
import { useSession } from '../session';
import { ErrorNote } from '../components/ErrorNote';

const MIN_PASSWORD = 10;

export function AcceptInvitation() {
  const { token = '' } = useParams();
  const { signedIn } = useSession();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (password.length < MIN_PASSWORD) return setError(`The password needs at least ${MIN_PASSWORD} characters.`);
    setBusy(true);
    setError(undefined);
    try {
      const session = await api.acceptInvitation(token, name.trim(), password);
      window.location.hash = '#/settings/api-keys';
      signedIn(session);
    } catch (failure) {
      setError(
        failure instanceof ApiError && failure.code === 'invitation_not_found'
          ? 'This invitation does not exist or was used already.'
          : failure instanceof ApiError && failure.code === 'invitation_expired'
            ? 'This invitation has expired: ask the account owner for a new one.'
            : failure instanceof Error
              ? failure.message
              : 'Accepting the invitation failed.',
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card">
      <h1>Accept the invitation</h1>
      <form onSubmit={(event) => void submit(event)} noValidate>
        <label htmlFor="name">Your name</label>
        <input id="name" autoComplete="name" required value={name} onChange={(event) => setName(event.target.value)} autoFocus />
        <label htmlFor="new-password">Password</label>
        <input id="new-password" type="password" autoComplete="new-password" aria-describedby="password-rule" required value={password} onChange={(event) => setPassword(event.target.value)} />
        <p id="password-rule" className="hint">
          At least {MIN_PASSWORD} characters.
        </p>
        <ErrorNote message={error} />
        <button type="submit" className="primary" disabled={busy || !name || !password}>
          Create my user
        </button>
      </form>
    </section>
  );
}
