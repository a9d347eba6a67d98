/**
 * The import rules of docs/architecture.md, as code: `npm test` runs
 * `depcruise shared infra functions --config test/dependency-cruiser.cjs` and fails on any violation.
 * Layers, bottom to top (a layer imports only layers below it, and never in a cycle):
 *   ground floor  shared/errors.ts, shared/live-list.ts, shared/sequence-window.ts, shared/message/, shared/retry/, shared/config/
 *   services      shared/observability/, shared/topology/, shared/idempotency/, shared/amqp/, shared/pacing/
 *   core          shared/core/          (the lifecycle of one message)
 *   copy          shared/copy/          (the copy path the modes share)
 *   modes         shared/pull/, shared/event/ (later shared/native/), side by side
 *   assembly      shared/queues/, shared/index.ts (the public entry point)
 *   tools         shared/parked/, then shared/console/ and shared/demo/, then shared/cli/
 *   cdk           shared/cdk/           (the CDK construct, boomerang-rabbitmq/cdk: deployment side, in the package)
 *   deployment    functions/, shared/examples/ (a team's handlers), infra/
 */
const GROUND = '^shared/(errors[.]ts|live-list[.]ts|sequence-window[.]ts|message/|retry/|config/)';
const SERVICES = '^shared/(observability|topology|idempotency|amqp|pacing)/';
const MODES = '^shared/(pull|event|native)/';
const ASSEMBLY = '^shared/(queues/|index[.]ts)';
const TOOLS = '^shared/(parked|console|demo|cli)/';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle, at any length (type-only imports count too).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'ground-floor-imports-ground-floor',
      comment:
        'errors.ts, message/, retry/ and config/ import nothing above them. Known debt (docs/architecture.md): ' +
        'config/ reads the idempotency options, the topology types and queue budget, and redact; they are pure and import only the ground floor.',
      severity: 'error',
      from: { path: GROUND },
      to: {
        path: '^shared/',
        pathNot: [
          GROUND,
          '^shared/idempotency/(in-code|options)[.]ts$',
          '^shared/topology/(types|queue-budget|exact-names)[.]ts$',
          '^shared/observability/redact[.]ts$',
        ],
      },
    },
    {
      name: 'services-below-core',
      comment: 'observability/, topology/, idempotency/, amqp/ and pacing/ import only the ground floor and each other.',
      severity: 'error',
      from: { path: SERVICES },
      to: { path: '^shared/', pathNot: [GROUND, SERVICES] },
    },
    {
      name: 'core-imports-no-mode',
      comment: 'core/ (the lifecycle of one message) imports no mode, no copy path, nothing above.',
      severity: 'error',
      from: { path: '^shared/core/' },
      to: { path: '^shared/', pathNot: [GROUND, SERVICES, '^shared/core/'] },
    },
    {
      name: 'copy-below-modes',
      comment: 'copy/ (the copy path pull and event share) imports no mode.',
      severity: 'error',
      from: { path: '^shared/copy/' },
      to: { path: '^shared/', pathNot: [GROUND, SERVICES, '^shared/(core|copy)/'] },
    },
    {
      name: 'modes-side-by-side',
      comment:
        'A mode imports no other mode, nothing from the assembly or the tools. The one exception: the pull function loads native/native-pull.ts for a native queue (below).',
      severity: 'error',
      from: { path: '^shared/(pull|event|native)/', pathNot: '^shared/pull/pull-function[.]ts$' },
      to: { path: '^shared/', pathNot: [GROUND, SERVICES, '^shared/(core|copy)/', '^shared/$1/'] },
    },
    {
      name: 'pull-function-loads-native-only',
      comment: 'The pull function serves a native queue (delayMode native) with native/native-pull.ts; it imports no other mode.',
      severity: 'error',
      from: { path: '^shared/pull/pull-function[.]ts$' },
      to: { path: '^shared/', pathNot: [GROUND, SERVICES, '^shared/(core|copy|pull)/', '^shared/native/native-pull[.]ts$'] },
    },
    {
      name: 'assembly-below-tools',
      comment: 'queues/ and index.ts import no tool (parked/, console/, demo/, cli/) and no example.',
      severity: 'error',
      from: { path: ASSEMBLY },
      to: { path: [TOOLS, '^shared/examples/'] },
    },
    {
      name: 'parked-below-console-and-cli',
      comment: 'parked/ (the parking-lot commands) imports no console, demo or CLI: they import it.',
      severity: 'error',
      from: { path: '^shared/parked/' },
      to: { path: ['^shared/(console|demo|cli)/', MODES, '^shared/examples/'] },
    },
    {
      name: 'console-and-demo-below-cli',
      comment: 'console/ and demo/ import no CLI and not each other: the CLIs (cli/) run them.',
      severity: 'error',
      from: { path: '^shared/(console|demo)/' },
      to: { path: ['^shared/cli/', '^shared/(console|demo)/'], pathNot: '^shared/$1/' },
    },
    {
      name: 'cdk-deploys-the-assembly',
      comment:
        "cdk/ (the construct a team's CDK app loads) reads the assembly (queues/) and what lies below it; it runs no tool " +
        '(parked/, console/, demo/, cli/) and no mode: the functions it deploys are bundles, not imports.',
      severity: 'error',
      from: { path: '^shared/cdk/' },
      to: { path: [TOOLS, MODES, '^shared/(core|copy|amqp)/', '^shared/index[.]ts$'] },
    },
    {
      name: 'nothing-in-shared-imports-cdk',
      comment: 'Only infra/ (and the tests) import cdk/: the runtime, its entry point (index.ts) and the tools never load aws-cdk-lib.',
      severity: 'error',
      from: { path: '^shared/', pathNot: '^shared/cdk/' },
      to: { path: '^shared/cdk/' },
    },
    {
      name: 'cdk-libraries-only-in-cdk',
      comment: 'aws-cdk-lib, constructs and cdk-nag are optional peers: only cdk/ and infra/ may import them, so that the runtime never needs them.',
      severity: 'error',
      from: { path: '^(shared|functions)/', pathNot: '^shared/cdk/' },
      to: { path: 'node_modules/(aws-cdk-lib|constructs|cdk-nag)/' },
    },
    {
      name: 'cli-only-from-scripts',
      comment: 'Nothing imports cli/ except cli/ itself and the command-line scripts of infra/ (build, build-package, synth and its synth-command).',
      severity: 'error',
      from: { pathNot: ['^shared/cli/', '^infra/(build|build-package|synth|synth-command)[.]ts$'] },
      to: { path: '^shared/cli/' },
    },
    {
      name: 'examples-only-from-functions',
      comment:
        "shared/examples/ are a team's handlers: only functions/ (and the tests) import them. Known debt (docs/architecture.md): " +
        "cdk/function-environment.ts reads the webhook example's HTTP_TIMEOUT_MS for its timeout warning.",
      severity: 'error',
      from: { pathNot: ['^functions/', '^shared/examples/', '^shared/cdk/function-environment[.]ts$'] },
      to: { path: '^shared/examples/' },
    },
    {
      name: 'runtime-graph-has-no-tools',
      comment:
        "What a Lambda bundle imports through the public entry point (shared/index.ts, the package's '.' export) reaches no tool " +
        '(the console, the CLI, the demo, the parking-lot commands), no CDK construct and no test code, at any depth.',
      severity: 'error',
      from: { path: '^shared/index[.]ts$' },
      to: { path: ['^shared/(console|cli|demo|parked|cdk)/', '^test/', '^infra/'], reachable: true },
    },
    {
      name: 'shared-imports-no-deployment',
      comment: 'shared/ imports nothing from functions/ or infra/.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(functions|infra)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^shared/console/ui/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'] },
  },
};
