import { BoomerangError } from '../errors.js';

/** A console request carried a bad value (a filter, an edited header, a rate); the message says which and what to send. Answered with 400. */
class ConsoleInputError extends BoomerangError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConsoleInputError';
  }
}

/** A queue of the console has no topology yet: the message names the queue and the command that declares it. Answered with 409. */
class QueueNotDeclaredError extends BoomerangError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'QueueNotDeclaredError';
  }
}

export { ConsoleInputError, QueueNotDeclaredError };
