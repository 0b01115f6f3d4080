// Leadership a test sets by hand (the controllers' Leadership): lost and regained at the moments it chooses.
import type { Leadership } from "../../src/controller/controller.js";

export class HandLeadership implements Leadership {
  isLeader: boolean;
  term = 0;
  #waiters: ((leading: boolean) => void)[] = [];

  constructor(leading = true) {
    this.isLeader = leading;
    if (leading) this.term = 1;
  }

  set(leading: boolean): void {
    if (leading && !this.isLeader) this.term++;
    this.isLeader = leading;
    if (leading) for (const wake of this.#waiters.splice(0)) wake(true);
  }

  waitForLeadership(signal: AbortSignal): Promise<boolean> {
    if (this.isLeader) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      signal.addEventListener("abort", () => resolve(false), { once: true });
    });
  }
}
