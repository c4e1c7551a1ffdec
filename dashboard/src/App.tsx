import { lazy, Suspense } from 'react';
import { HashRouter, Route, Routes } from 'react-router';
import { SessionProvider, useSession } from './session';
import { SignIn } from './pages/SignIn';
import { AcceptInvitation } from './pages/AcceptInvitation';

// Only the sign-in pages are in the first bundle; everything behind sign-in (the GraphQL client,
// charts, the map, the editors) loads once a session exists, so the first page is small and quick.
// Its download starts at once, beside the session check, so a signed-in visitor does not wait for
// the check and then for the chunk; for a visitor who must sign in it costs a parse of ~50 kB.
const signedInChunk = import('./SignedIn');
const SignedIn = lazy(() => signedInChunk.then((m) => ({ default: m.SignedIn })));

export function App() {
  return (
    <SessionProvider>
      <HashRouter>
        <Shell />
      </HashRouter>
    </SessionProvider>
  );
}

function Shell() {
  const { session } = useSession();
  if (session === undefined) return <p className="boot" role="status">Loading the dashboard…</p>;
  if (session === null) {
    return (
      <main className="narrow" id="main">
        <Routes>
          <Route path="/invite/:token" element={<AcceptInvitation />} />
          <Route path="*" element={<SignIn />} />
        </Routes>
      </main>
    );
  }
  return (
    <Suspense fallback={<p className="boot" role="status">Loading the dashboard…</p>}>
      <SignedIn />
    </Suspense>
  );
}
