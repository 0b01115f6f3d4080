// One source, many listeners: a reflector's changes, the guards' events. Listeners run in subscription order.

export type Listener<T> = (value: T) => void;

export class Publisher<T> {
  readonly #listeners: Listener<T>[] = [];

  subscribe(listener: Listener<T>): void {
    this.#listeners.push(listener);
  }

  publish(value: T): void {
    for (const listener of this.#listeners) listener(value);
  }
}
