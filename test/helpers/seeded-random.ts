/** The seed from `name` in the environment, else a fresh one; either way it is the one to print. */
function seedFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): number {
  const given = env[name];
  if (given !== undefined && /^\d+$/.test(given)) return Number(given);
  return Math.floor(Math.random() * 2 ** 31);
}

export { seedFromEnv };
