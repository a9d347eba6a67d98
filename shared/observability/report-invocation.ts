// The invocation wrapper moved to shared/engine/lambda-function.ts; this path stays for imports of FunctionOptions made before.
export type { FunctionOptions } from '../engine/lambda-function.js';
