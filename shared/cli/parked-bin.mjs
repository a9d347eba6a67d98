#!/usr/bin/env node
// The `boomerang-parked` bin: registers tsx so Node can load the TypeScript CLI, then runs it.
import { register } from 'tsx/esm/api';

register();
await import('./parked.ts');
