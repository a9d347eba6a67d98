import { RetryFunctionError } from '../errors.js';

/** A parking-lot command could not do what it was asked; nothing was lost (the message is still parked). */
class ParkedCommandError extends RetryFunctionError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ParkedCommandError';
  }
}

/**
 * Someone else consumes the parking lot: the walk would not see the messages they hold, and two
 * walks at once would mix up the order.
 */
class ParkingLotBusyError extends ParkedCommandError {
  public constructor(
    public readonly queue: string,
    public readonly consumers: number,
  ) {
    super(`${queue} has ${consumers} consumer(s): another parked command (or a stray consumer) is reading it. Wait for it to finish, or find it in the management UI (Queues > ${queue} > Consumers).`);
    this.name = 'ParkingLotBusyError';
  }
}

export { ParkedCommandError, ParkingLotBusyError };
