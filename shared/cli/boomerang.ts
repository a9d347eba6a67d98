#!/usr/bin/env node
/**
 * `boomerang`, the package's one command (its `bin`): `boomerang <command> [args]` runs topology,
 * invoke, parked, console or local, on the queue files of the team's functions/ folder (or
 * `--functions-dir`). This repository's `npm run <command> -- <args>` scripts run it from the source.
 * Nothing in the runtime's import graph (shared/index.ts) imports it.
 */
import { boomerang } from './main.js';

const { exitWhenDone } = await boomerang(process.argv.slice(2));
if (exitWhenDone) process.stdout.write('', () => process.exit());
