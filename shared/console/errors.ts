import { BoomerangError } from '../errors.js';

/** A console request carried a bad value (a filter, an edited header, a rate); the message says which and what to send. Answered with 400. */
class ConsoleInputError extends BoomerangError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConsoleInputError';
  }
}

export { ConsoleInputError };
