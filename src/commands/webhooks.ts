import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { UsageError } from '../config/usage-error.js';
import { createRegistry } from '../metrics/registry.js';
import { withProcess, type Command } from './command.js';
import { createProviderClient, type ProviderClient } from '../provider/client.js';
import { createProviderMetrics } from '../provider/metrics.js';
import { SUBSCRIPTION_TOPICS } from '../provider/vocabulary.js';

const TOPIC_SHAPE = /^[a-z_]+(\/[a-z_]+)?$/;

/** First 12 hex digits of the secret's SHA-256: enough to compare secrets without showing them. */
export function fingerprint(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex').slice(0, 12);
}

const HELP = `Usage:
  bnpl-recon webhooks register --address URL [--topic T]...
  bnpl-recon webhooks keys [--reveal]

register  POST {PROVIDER_WEBHOOK_PATH_PREFIX}/webhooks once per topic, telling the provider to
          deliver to URL (this daemon's POST /webhooks). Topics are bare (order) or topic/subtopic
          (order/confirmed); without --topic every topic family the daemon reads is registered,
          as bare topics where the spec offers them and subtopics otherwise:
          ${SUBSCRIPTION_TOPICS.join(', ')}. Registration is per environment (the API key's).
keys      GET {PROVIDER_WEBHOOK_PATH_PREFIX}/webhooks/keys and print how many signing secrets there
          are with their fingerprints (first 12 hex digits of SHA-256). --reveal prints the secrets
          themselves instead, one per line.

Settings: PROVIDER_BASE_URL and PROVIDER_API_KEY (required), PROVIDER_WEBHOOK_PATH_PREFIX (default
empty, as the spec writes the paths; set /api/v1 if your provider serves them there).`;

export const command: Command = {
  summary: 'register the webhook receiver with the provider, or show the signing secrets',
  help: HELP,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === 'register') return register(rest);
    if (sub === 'keys') return keys(rest);
    throw new UsageError(sub === undefined ? `a subcommand is required\n\n${HELP}` : `unknown subcommand '${sub}'\n\n${HELP}`);
  },
};

/** The provider's API without a ledger, so without a context: these calls' metrics go to a registry of their own that nothing serves. */
function withProvider(name: string, body: (provider: ProviderClient) => Promise<number>): Promise<number> {
  return withProcess(name, { require: ['PROVIDER_BASE_URL', 'PROVIDER_API_KEY'] }, ({ config, log, shutdown }) => {
    const provider = createProviderClient(config, log, createProviderMetrics(createRegistry({ defaultMetrics: false })));
    shutdown.register('provider client', () => provider.close());
    return body(provider);
  });
}

async function register(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { address: { type: 'string' }, topic: { type: 'string', multiple: true } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const address = values.address;
  if (address === undefined) throw new UsageError('--address URL is required');
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new UsageError(`--address '${address}' is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`--address must be an http(s) URL, not ${url.protocol}`);
  if (url.protocol === 'http:') process.stderr.write('bnpl-recon webhooks: warning: the spec says receiver endpoints should use HTTPS\n');
  const topics = values.topic && values.topic.length > 0 ? [...new Set(values.topic)] : [...SUBSCRIPTION_TOPICS];
  for (const topic of topics) {
    if (!TOPIC_SHAPE.test(topic)) throw new UsageError(`--topic '${topic}' is not a topic or topic/subtopic`);
  }
  return withProvider('webhooks register', async (provider) => {
    for (const topic of topics) {
      const { status } = await provider.registerWebhook(topic, address);
      process.stdout.write(`registered ${topic} -> ${address} (HTTP ${status})\n`);
    }
    return 0;
  });
}

async function keys(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { reveal: { type: 'boolean', default: false } }, allowPositionals: true, strict: true });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  return withProvider('webhooks keys', async (provider) => {
    const secrets = await provider.fetchWebhookSecrets();
    if (values.reveal) {
      for (const secret of secrets) process.stdout.write(`${secret}\n`);
    } else {
      process.stdout.write(`${secrets.length} webhook signing secret${secrets.length === 1 ? '' : 's'}\n`);
      for (const secret of secrets) process.stdout.write(`sha256:${fingerprint(secret)}\n`);
    }
    return 0;
  });
}
