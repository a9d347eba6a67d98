import { describe, expect, it } from 'vitest';
import { stackConfigFromContext } from '../../infra/stack-config.js';
import { timeoutWarnings } from '../../infra/timeout-warnings.js';

describe('timeoutWarnings', () => {
  it.each([
    // [context, warned modes]
    [{}, []],
    [{ pullTimeoutSeconds: '13' }, []],
    [{ pullTimeoutSeconds: '12' }, ['pull']],
    [{ functionEnvironment: { HTTP_TIMEOUT_MS: '58000' } }, ['pull']],
    [{ functionEnvironment: { HTTP_TIMEOUT_MS: '57000' } }, []],
    [{ functionEnvironment: { SAFETY_MARGIN_MS: '55000' } }, ['pull']],
    [{ modes: 'event', eventTimeoutSeconds: '10' }, ['event']],
    [{ modes: 'pull,event', acknowledgeCompetingModes: 'true', pullTimeoutSeconds: '10', eventTimeoutSeconds: '30' }, ['pull']],
    [{ modes: 'pull,event', acknowledgeCompetingModes: 'true', pullTimeoutSeconds: '10', eventTimeoutSeconds: '10' }, ['pull', 'event']],
  ])('for %j warns about %j', (context, modes) => {
    // Act
    const warnings = timeoutWarnings(stackConfigFromContext(context));
    // Assess
    expect(warnings.map((w) => w.mode)).toEqual(modes);
  });

  it('says what the timeout cuts and what to change', () => {
    // Act
    const [warning] = timeoutWarnings(stackConfigFromContext({ pullTimeoutSeconds: '10', functionEnvironment: { HTTP_TIMEOUT_MS: '9500', SAFETY_MARGIN_MS: '2000' } }));
    // Assess
    expect(warning?.message).toBe(
      'pull function: HTTP_TIMEOUT_MS (9500) + SAFETY_MARGIN_MS (2000) = 11500 ms exceeds its timeout, pullTimeoutSeconds=10 s: a partner call is aborted after 8000 ms at most, ' +
        'before HTTP_TIMEOUT_MS, and its message retried. Raise pullTimeoutSeconds to at least 12, or lower HTTP_TIMEOUT_MS or SAFETY_MARGIN_MS in functionEnvironment.',
    );
  });
});
