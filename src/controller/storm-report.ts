// Says when a storm breaker opens or closes: the open-breakers gauge and one log line per transition.
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import type { StormTransition, StormView } from "../safety/storm-breaker.js";

export class StormReport {
  readonly #storm: StormView;
  readonly #metrics: Metrics;
  readonly #logger: Logger;
  #openNodeBreakers = 0;

  constructor(storm: StormView, metrics: Metrics, logger: Logger) {
    this.#storm = storm;
    this.#metrics = metrics;
    this.#logger = logger;
  }

  transition(transition: StormTransition): void {
    const where = transition.scope === "node" ? { node: transition.node } : {};
    if (transition.scope === "node") {
      this.#openNodeBreakers += transition.open ? 1 : -1;
      this.#metrics.stormBreakerOpen.set({ scope: "node" }, this.#openNodeBreakers);
    } else {
      this.#metrics.stormBreakerOpen.set({ scope: "cluster" }, transition.open ? 1 : 0);
    }
    const detail = this.#storm.describe(transition.scope, transition.node);
    if (transition.open)
      this.#logger.warn("storm breaker open: holding deletions", { scope: transition.scope, ...where, detail });
    else this.#logger.info("storm breaker closed: deletions resume", { scope: transition.scope, ...where, detail });
  }
}
