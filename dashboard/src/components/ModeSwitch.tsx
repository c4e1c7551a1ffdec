import { useSession } from '../session';

/** Live/test switch for the whole app (Stripe-like): every page shows one mode's keys and data. */
export function ModeSwitch() {
  const { mode, setMode } = useSession();
  return (
    <label className="mode-switch">
      <input type="checkbox" role="switch" checked={mode === 'test'} onChange={(event) => setMode(event.target.checked ? 'test' : 'live')} />
      <span>Test mode</span>
    </label>
  );
}
