/**
 * Lets Node import a team's TypeScript files (functions/*.ts, `invoke --handler <module>.ts`) when the
 * CLI runs as the package's compiled JavaScript (`npx boomerang`): tsx's loader, registered once,
 * before any queue file is imported. From the .ts source the CLI already runs under tsx (`npm run
 * topology`, `node --import tsx`), whose loader is in place: a second one would transform every file twice.
 * @example await loadTypeScript(); // then import('./functions/orders.ts') works
 */
async function loadTypeScript(moduleUrl: string = import.meta.url): Promise<boolean> {
  if (!moduleUrl.endsWith('.js')) return false;
  // Imported only here: from the source, tsx's API is not needed at all.
  const { register } = await import('tsx/esm/api');
  register();
  return true;
}

export { loadTypeScript };
