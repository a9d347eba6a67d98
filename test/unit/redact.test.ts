import { describe, expect, it } from 'vitest';
import { redactText, redactUrl } from '../../shared/observability/redact.js';

describe('redactUrl', () => {
  it.each([
    ['amqp://app:s3cret@mq.example.com:5672/prod', 'amqp://app:***@mq.example.com:5672/prod'],
    ['amqps://app:s3cret@mq.example.com:5671', 'amqps://app:***@mq.example.com:5671'],
    ['AMQPS://app:s3cret@mq.example.com', 'AMQPS://app:***@mq.example.com'],
    ['amqp://app@mq.example.com/prod', 'amqp://app@mq.example.com/prod'],
    ['amqp://mq.example.com:5672/prod', 'amqp://mq.example.com:5672/prod'],
    ['amqp://app:@mq.example.com', 'amqp://app:***@mq.example.com'],
    ['amqp://app:p%40ss%2Fw%3Ard@mq.example.com', 'amqp://app:***@mq.example.com'],
    // A raw '@' works with amqplib (the last '@' ends the credentials), so it must not leak.
    ['amqp://app:p@ss@mq.example.com', 'amqp://app:***@mq.example.com'],
    ['amqp://app:p@s3cret/x@mq.example.com/prod', 'amqp://app:***@mq.example.com/prod'],
    ['amqp://app:s3/cret@mq.example.com', 'amqp://app:***@mq.example.com'],
    ['amqp://app:s3:cret@mq.example.com', 'amqp://app:***@mq.example.com'],
    ['http://app:s3cret@mq.example.com', 'http://app:***@mq.example.com'],
    // Not a URL (a piece cut at a comma, no scheme): everything before the '@' may be a password.
    ['s3cret@mq.example.com', '***@mq.example.com'],
    ['amqp:/app:s3cret@mq.example.com', '***@mq.example.com'],
  ])('redacts %s as %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});

describe('redactText', () => {
  it.each([
    ['connect ECONNREFUSED amqp://app:s3cret@mq:5672', 'connect ECONNREFUSED amqp://app:***@mq:5672'],
    ['tried amqps://a:s3cret@mq-1 and amqp://b:0ther@mq-2/prod', 'tried amqps://a:***@mq-1 and amqp://b:***@mq-2/prod'],
    ['amqp://a:s3cret@mq-1,amqp://b:0ther@mq-2', 'amqp://a:***@mq-1,amqp://b:***@mq-2'],
    ['{"urls":["amqp://a:s3cret@mq-1","amqp://b:0ther@mq-2"],"x":"y@z"}', '{"urls":["amqp://a:***@mq-1","amqp://b:***@mq-2"],"x":"y@z"}'],
    ['(amqp://app:p%40ss@mq)', '(amqp://app:***@mq)'],
    ['url=amqp://app:p@ss@mq/prod;', 'url=amqp://app:***@mq/prod;'],
    ['url=amqp://app:pa,s3cret@mq/prod', 'url=amqp://app:***@mq/prod'],
    ['AMQP://App:S3cret@MQ', 'AMQP://App:***@MQ'],
    ['user app@mq, no password: amqp://app@mq:5672/prod', 'user app@mq, no password: amqp://app@mq:5672/prod'],
    ['amqp://mq:5672/prod is down', 'amqp://mq:5672/prod is down'],
    ['mail me at ops@example.com', 'mail me at ops@example.com'],
  ])('redacts %s', (text, expected) => {
    expect(redactText(text)).toBe(expected);
  });
});
