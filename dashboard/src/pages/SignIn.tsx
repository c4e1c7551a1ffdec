import { useState, type FormEvent } from 'react';
import { api, ApiError, describeWait } from '../api';
import { useSession } from '../session';
import { ErrorNote } from '../components/ErrorNote';

export function SignIn() {
  const { signedIn } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      signedIn(await api.signIn(email.trim(), password));
    } catch (failure) {
      setError(signInError(failure));
      setPassword('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card">
      <h1>Sign in</h1>
      <form onSubmit={(event) => void submit(event)} noValidate>
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} autoFocus />
        <label htmlFor="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
        <ErrorNote message={error} />
        <button type="submit" className="primary" disabled={busy || !email || !password}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p className="hint">Accounts are created by an invitation from their owner; the first owner is created with the command-line tool.</p>
    </section>
  );
}

function signInError(failure: unknown): string {
  if (!(failure instanceof ApiError)) return 'Signing in failed.';
  if (failure.status === 429) return `Too many sign-in attempts. ${describeWait(failure.retryAfterSeconds)}`;
  if (failure.code === 'invalid_credentials') return 'The email or the password is wrong.';
  return failure.message;
}
