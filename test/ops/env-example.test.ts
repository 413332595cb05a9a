import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';

/** `.env.example` is the template of every deployment's settings: it must list exactly what the schema reads. */
const lines = readFileSync('.env.example', 'utf8').split('\n');
const entries = lines
  .map((line) => /^(#?)([A-Z][A-Z0-9_]*)=(.*)$/.exec(line))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => ({ commented: m[1] === '#', name: m[2]!, value: m[3]! }));

describe('.env.example', () => {
  it('lists every setting of the config schema once, and nothing else', () => {
    const names = entries.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(Object.keys(configSchema.shape).sort());
  });

  it("shows each commented setting at the schema's default", () => {
    const defaults = loadConfig({});
    for (const entry of entries.filter((e) => e.commented)) {
      const parsed = loadConfig({ [entry.name]: entry.value });
      expect(parsed[entry.name as keyof typeof parsed], entry.name).toEqual(defaults[entry.name as keyof typeof defaults]);
    }
  });

  it('has placeholders that pass validation for the settings start needs', () => {
    const set = Object.fromEntries(entries.filter((e) => !e.commented).map((e) => [e.name, e.value]));
    expect(Object.keys(set).sort()).toEqual(['DATABASE_URL', 'PROVIDER_API_KEY', 'PROVIDER_BASE_URL', 'PROVIDER_ENV']);
    expect(() => loadConfig(set)).not.toThrow();
  });
});
