import { lazy, Suspense, type ReactNode } from 'react';
import { Navigate, NavLink, Route, Routes } from 'react-router';
import { Provider } from 'urql';
import { useSignedIn } from './session';
import { graphClient, type GraphKind } from './graphql';
import { ApiKeys } from './pages/ApiKeys';
import { ModeSwitch } from './components/ModeSwitch';

// Pages with charts, the map and the editors load on demand.
const Usage = lazy(() => import('./pages/Usage').then((m) => ({ default: m.Usage })));
const Users = lazy(() => import('./pages/Users').then((m) => ({ default: m.Users })));
const Traceroute = lazy(() => import('./pages/Traceroute').then((m) => ({ default: m.Traceroute })));
const Inference = lazy(() => import('./pages/Inference').then((m) => ({ default: m.Inference })));
const Reference = lazy(() => import('./pages/Reference').then((m) => ({ default: m.Reference })));
const Explorer = lazy(() => import('./pages/Explorer').then((m) => ({ default: m.Explorer })));

/** The app behind sign-in: header with the mode switch and sign-out, sections, pages. */
export function SignedIn() {
  const { user, account, mode, signOut } = useSignedIn();
  const modeKind: GraphKind = mode;
  const graph = (kind: GraphKind, page: ReactNode) => <Provider value={graphClient(kind)}>{page}</Provider>;
  return (
    <div className={`layout mode-${mode}`}>
      <a className="skip" href="#main" onClick={(event) => (event.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header className="top">
        <span className="brand">{account.name}</span>
        <ModeSwitch />
        <span className="who" title={user.email}>
          {user.name || user.email} · {user.role}
          {user.platformAdmin ? ' · admin' : ''}
        </span>
        <button type="button" className="link" onClick={() => void signOut()}>
          Sign out
        </button>
        <button type="button" className="link" onClick={() => void signOut(true)}>
          Sign out everywhere
        </button>
      </header>
      {mode === 'test' && <p className="test-banner">Test mode: you are viewing test keys and test data.</p>}
      <nav aria-label="Sections" className="side">
        <NavLink to="/settings/api-keys">API keys</NavLink>
        <NavLink to="/usage">Usage</NavLink>
        {user.role === 'owner' && <NavLink to="/users">Users</NavLink>}
        {user.platformAdmin && <NavLink to="/admin/traceroute">Traceroute admin</NavLink>}
        {user.platformAdmin && <NavLink to="/admin/inference">Inference</NavLink>}
        <NavLink to="/reference">API reference</NavLink>
        <NavLink to="/explorer">GraphQL explorer</NavLink>
      </nav>
      <main id="main" tabIndex={-1}>
        <Suspense fallback={<p role="status">Loading…</p>}>
          <Routes>
            <Route path="/settings/api-keys" element={graph(modeKind, <ApiKeys key={mode} />)} />
            <Route path="/usage" element={<Usage key={mode} />} />
            <Route path="/users" element={user.role === 'owner' ? <Users /> : <Navigate to="/settings/api-keys" replace />} />
            <Route path="/admin/traceroute" element={user.platformAdmin ? graph('admin', <Traceroute />) : <NotAllowed />} />
            <Route path="/admin/inference" element={user.platformAdmin ? graph('admin', <Inference />) : <NotAllowed />} />
            <Route path="/reference" element={<Reference />} />
            <Route path="/explorer" element={<Explorer kind={modeKind} />} />
            <Route path="/invite/:token" element={<p>You are signed in already. Sign out to accept an invitation as another user.</p>} />
            <Route path="*" element={<Navigate to="/settings/api-keys" replace />} />
          </Routes>
        </Suspense>
      </main>
    </div>
  );
}

function NotAllowed() {
  return <p role="alert">This area is for platform administrators.</p>;
}
