import { configSchema, type Config } from './schema.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    readonly setting: string,
  ) {
    super(message);
  }
}

/** Parses the environment once; empty strings count as unset so `FOO=` in a unit file means "default". */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(configSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const setting = String(issue?.path[0] ?? 'unknown');
    throw new ConfigError(`invalid setting ${setting}: ${issue?.message ?? 'invalid'}`, setting);
  }
  return parsed.data;
}

/** Throws a ConfigError naming the first missing setting a command needs. */
export function requireSettings<K extends keyof Config>(config: Config, ...keys: K[]): { [P in K]-?: NonNullable<Config[P]> } & Config {
  for (const key of keys) {
    if (config[key] === undefined) throw new ConfigError(`setting ${String(key)} is required for this command`, String(key));
  }
  return config as { [P in K]-?: NonNullable<Config[P]> } & Config;
}
