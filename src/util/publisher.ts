// One source, many listeners: a reflector's changes, the guards' events. Listeners run in subscription order, each on
// its own: one that throws does not keep the value from the listeners after it, nor stop the source (a watch would
// count the throw as its own failure, and the triggers after the thrower would never see that change).

export type Listener<T> = (value: T) => void;

/** Told of each listener that threw, with the value it threw on. */
export type ListenerFailed<T> = (error: unknown, value: T) => void;

export class Publisher<T> {
  readonly #listeners: Listener<T>[] = [];
  readonly #failed: ListenerFailed<T> | undefined;

  /**
   * With `failed`, each listener that throws is reported there. Without it, every listener still hears the value,
   * and then the failure is thrown to the publisher's caller (a publisher inside another's listener: the outer one
   * reports it).
   */
  constructor(failed?: ListenerFailed<T>) {
    this.#failed = failed;
  }

  subscribe(listener: Listener<T>): void {
    this.#listeners.push(listener);
  }

  publish(value: T): void {
    const errors: unknown[] = [];
    for (const listener of this.#listeners) {
      try {
        listener(value);
      } catch (error) {
        if (this.#failed) this.#failed(error, value);
        else errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} listeners failed`);
  }
}
