/**
 * mulberry32: a tiny seeded PRNG, good enough to make a demo, fault or bench run repeatable from its
 * seed (not for anything secret).
 */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The seed from `name` in the environment, else a fresh one; either way it is the one to print. */
function seedFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): number {
  const given = env[name];
  if (given !== undefined && /^\d+$/.test(given)) return Number(given);
  return Math.floor(Math.random() * 2 ** 31);
}

export { seededRandom, seedFromEnv };
