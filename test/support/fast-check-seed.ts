import fc from 'fast-check';

/**
 * One seed for every property of a test file, so that a failure found on someone's machine can be
 * replayed exactly: FC_SEED=<seed> npx vitest run <file>. fast-check names the seed (and the
 * shrink path) in its failure report; the line printed before the first property runs gives it
 * for a passing run too, e.g. to compare two runs.
 */
const SEED_VARIABLE = 'FC_SEED';

function seedFromEnvironment(): number {
  const given = process.env[SEED_VARIABLE];
  if (given === undefined || given.trim() === '') return (Math.random() * 0x1_0000_0000) | 0;
  const seed = Number(given);
  // fast-check seeds are 32-bit integers; anything else would be silently truncated to another seed.
  if (!Number.isInteger(seed) || seed < -0x8000_0000 || seed > 0xffff_ffff) {
    throw new Error(`${SEED_VARIABLE} must be a 32-bit integer (as fast-check prints it), not ${JSON.stringify(given)}`);
  }
  return seed | 0;
}

const seed = seedFromEnvironment();
fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });

// Setup files run once per test file, but the fast-check module (and its global plugins) may be
// shared by the files a worker runs: install the announcing plugin once, and reset per file.
const state = globalThis as typeof globalThis & { __fastCheckSeed?: { seed: number; announced: boolean; on: WeakSet<object> } };
const on = state.__fastCheckSeed?.on ?? new WeakSet<object>();
state.__fastCheckSeed = { seed, announced: false, on };
if (!on.has(fc)) {
  on.add(fc);
  fc.installGlobalPlugin(
    fc.beforeEach(() => {
      const current = state.__fastCheckSeed!;
      if (current.announced) return;
      current.announced = true;
      // Only files that run properties print it, and only once.
      console.log(`fast-check seed: ${current.seed} (replay with ${SEED_VARIABLE}=${current.seed})`);
    }),
  );
}
