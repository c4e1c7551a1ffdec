import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, ApiError, onSessionExpired, sessionChanged, type Mode, type SessionInfo } from './api';

interface SessionState {
  /** undefined while the first check runs; null when signed out. */
  session: SessionInfo | null | undefined;
  mode: Mode;
  setMode(mode: Mode): void;
  signedIn(session: SessionInfo): void;
  signOut(everywhere?: boolean): Promise<void>;
}

const SessionContext = createContext<SessionState | undefined>(undefined);
const MODE_KEY = 'dashboard.mode';

/** Holds who is signed in and the live/test mode the whole app shows (never both at once). */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [mode, setModeState] = useState<Mode>(() => (localStorage.getItem(MODE_KEY) === 'test' ? 'test' : 'live'));

  useEffect(
    () =>
      onSessionExpired(() => {
        sessionChanged();
        setSession(null);
      }),
    [],
  );

  useEffect(() => {
    api.session().then(setSession, (error: unknown) => {
      if (!(error instanceof ApiError) || error.status !== 401) console.warn('session check failed', error);
      setSession(null);
    });
  }, []);

  const setMode = useCallback((next: Mode) => {
    localStorage.setItem(MODE_KEY, next);
    setModeState(next);
  }, []);
  const signedIn = useCallback((next: SessionInfo) => {
    sessionChanged();
    setSession(next);
  }, []);
  const signOut = useCallback(async (everywhere = false) => {
    try {
      await (everywhere ? api.signOutEverywhere() : api.signOut());
    } finally {
      sessionChanged();
      setSession(null);
    }
  }, []);

  const value = useMemo(() => ({ session, mode, setMode, signedIn, signOut }), [session, mode, setMode, signedIn, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside SessionProvider');
  return state;
}

/** The signed-in session; only for pages rendered behind the sign-in gate. */
export function useSignedIn(): SessionInfo & Omit<SessionState, 'session'> {
  const state = useSession();
  if (!state.session) throw new Error('useSignedIn without a session');
  return { ...state, ...state.session };
}
