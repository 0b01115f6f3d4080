// The one error the configuration layer throws: the CLI prints its message and exits 2.

export class ConfigError extends Error {
  readonly code = "ERR_CONFIG";
  override readonly name = "ConfigError";
}

/** `invalid --mode "remove": expected one of delete, label, report` — every value error reads the same way. */
export function invalidValue(source: string, raw: string, reason: string): ConfigError {
  return new ConfigError(`invalid ${source} ${JSON.stringify(raw)}: ${reason}`);
}
