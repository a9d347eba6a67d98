/**
 * The child process of `readQueueDefinitions` (definitions.ts): imports the queue definition files the
 * request on stdin names, checks `functionEnvironment` against each queue as its functions will read it,
 * and writes what the construct needs per queue, as JSON, to file descriptor 3 (stdout and stderr stay
 * the team's code's own). A construct is built synchronously and Node 20 cannot import an ES module
 * synchronously, hence a process of its own; the parent registers tsx, so TypeScript files load whatever
 * runs the team's CDK app.
 */
import { createWriteStream } from 'node:fs';
import { relative } from 'node:path';
import { formatOverrides } from '../config/env-overrides.js';
import { loadDeclaredQueues } from '../queues/declared-queues.js';
import type { DeployedQueue } from './deployed-queue.js';
import { ANSWER_FD, type DefinitionsAnswer, type DefinitionsRequest } from './definitions.js';
import { topologyOptionsFromConfig } from '../config/config.js';
import { buildTopologyPlan } from '../topology/plan.js';
import { planSummary } from '../topology/plan-summary.js';
import { checkFunctionEnvironment, synthEnvironment } from './function-environment.js';
import { rateLimitShares } from './rate-limit-shares.js';

async function answer(request: DefinitionsRequest): Promise<DefinitionsAnswer> {
  try {
    const declared = await loadDeclaredQueues({ dir: request.functionsDir, files: request.files, env: {} });
    const env = request.functionEnvironment;
    const queues = declared.map((queue): DeployedQueue => {
      const file = relative(process.cwd(), queue.file) || queue.file;
      const reading = checkFunctionEnvironment(queue, env);
      return {
        name: queue.name,
        workQueue: queue.workQueue,
        file,
        path: queue.file,
        deploy: queue.deploy,
        code: queue.code.delayMode === undefined ? {} : { delayMode: queue.code.delayMode },
        ...reading,
        rateLimitShares: rateLimitShares({ name: queue.name, file, deploy: queue.deploy, rateLimit: reading.rateLimit }),
        topology: planSummary(buildTopologyPlan(topologyOptionsFromConfig(queue.loadConfig(synthEnvironment(queue, env))))),
        overrides: formatOverrides(queue.overrides(env)),
      };
    });
    return { queues };
  } catch (error) {
    return { error: { name: (error as Error).name ?? 'Error', message: (error as Error).message ?? String(error) } };
  }
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const result = await answer(JSON.parse(Buffer.concat(chunks).toString('utf8')) as DefinitionsRequest);
  const out = createWriteStream('', { fd: ANSWER_FD });
  await new Promise<void>((resolve, reject) => out.end(JSON.stringify(result), () => resolve()).on('error', reject));
  // A definition file may leave a timer or a socket open at import: the answer is written, so the child is done.
  process.exit(0);
}

await main();
