import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { addressMatcher } from '../../src/config/addresses.js';
import { loadConfig } from '../../src/config/load.js';
import { clientAddress } from '../../src/webhooks/source-address.js';
import { configSchema } from '../../src/config/schema.js';
import type { Database } from '../../src/db/database.js';
import { CHECK_TIMEOUT_MS, healthRoutes } from '../../src/http/health.js';
import { MAX_UPLOADS_AT_ONCE } from '../../src/http/operator-upload.js';
import { archiveDirectory } from '../../src/ledger/partition-job.js';
import { silentLogger } from '../../src/log/logger.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { startMetricsServer } from '../../src/http/metrics.js';

/**
 * Every manifest in ops/kubernetes/ against the Kubernetes OpenAPI schemas (kubernetes-models
 * carries them compiled to ajv validators; @kubernetes-models/prometheus-operator the ServiceMonitor
 * CRD's), then cross-checked with the daemon itself: ports, probe and scrape paths, setting names and
 * values, and the Pod Security "restricted" profile's requirements.
 *
 * Limitation: these schemas (like Kubernetes' own OpenAPI) do not forbid unknown fields, so a
 * misspelt optional field would pass the schema step; the cross-checks below read every field this
 * deployment relies on by its exact name, which catches that for them.
 */

const dir = path.resolve('ops/kubernetes');
/** What an operator fills the Secret template's placeholders with. */
const STRONG_SECRETS = { OPERATOR_TOKEN: randomBytes(24).toString('hex') };
type Model = { validate(): void };
const MODELS: Record<string, new (data: never) => Model> = {
  'v1/ServiceAccount': ServiceAccount,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
};

interface Doc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

function readManifests(file: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'));
  if (!Array.isArray(docs)) throw new Error(`${file}: no YAML documents`);
  return docs.map((d) => {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]!.message}`);
    return d.toJS() as Doc;
  });
}

function validate(doc: Doc): void {
  const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
  if (!Model) throw new Error(`no schema for ${doc.apiVersion} ${doc.kind}`);
  new Model(doc as never).validate();
}

const files = readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const all = files.flatMap((file) => readManifests(file).map((doc) => ({ file, doc })));
const one = (kind: string): Doc => {
  const found = all.filter((m) => m.doc.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!.doc;
};

describe('Kubernetes manifests', () => {
  const deployment = one('Deployment') as Doc & { spec: { template: { metadata: Doc['metadata']; spec: IPodSpec } } };
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0] as IContainer;
  const configMap = one('ConfigMap') as Doc & { data: Record<string, string> };
  const secret = one('Secret') as Doc & { stringData: Record<string, string> };
  const defaults = loadConfig({});

  it('every document validates against its Kubernetes schema, and a broken one does not', () => {
    expect(all.length).toBeGreaterThanOrEqual(8);
    for (const { file, doc } of all) expect(() => validate(doc), `${file}: ${doc.kind}`).not.toThrow();
    const broken = structuredClone(deployment);
    (broken.spec.template.spec.containers[0]!.ports![0] as { containerPort: unknown }).containerPort = 'http';
    expect(() => validate(broken)).toThrow(/containerPort must be integer/);
    const noSelector = structuredClone(deployment) as unknown as Doc & { spec: Record<string, unknown> };
    delete noSelector.spec.selector;
    expect(() => validate(noSelector)).toThrow(/selector/);
  });

  it('kustomization.yaml applies every manifest but the Secret template', () => {
    const kustomization = readManifests('kustomization.yaml')[0] as unknown as { resources: string[] };
    expect([...kustomization.resources].sort()).toEqual(files.filter((f) => f !== 'secret.example.yaml').sort());
  });

  it('ports, probes and the scrape path are the daemon\'s own', async () => {
    const ports = Object.fromEntries((container.ports ?? []).map((p) => [p.name, p.containerPort]));
    expect(ports).toEqual({ http: defaults.PORT, metrics: defaults.METRICS_PORT });
    const health = healthRoutes({} as Database, { isStopping: () => false, hasSigningSecret: () => true }).map((r) => r.path);
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
      expect(probe?.httpGet?.port).toBe('http');
      expect(health).toContain(probe?.httpGet?.path);
    }
    expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(container.livenessProbe?.httpGet?.path).toBe('/healthz');
    // /readyz answers 503 naming the cause after waiting CHECK_TIMEOUT_MS for the ledger: the probe
    // must wait longer (the kubelet's default is 1 s), or a slow ledger shows as a probe timeout.
    expect((container.readinessProbe?.timeoutSeconds ?? 1) * 1000).toBeGreaterThan(CHECK_TIMEOUT_MS);

    // The scrape path and port, as annotations and as the ServiceMonitor says, against the real metrics server.
    const annotations = deployment.spec.template.metadata.annotations ?? {};
    expect(Number(annotations['prometheus.io/port'])).toBe(defaults.METRICS_PORT);
    type ServiceDoc = Doc & { spec: { ports: { name: string; targetPort: string }[]; publishNotReadyAddresses?: boolean; selector: Record<string, string> } };
    const services = all.filter((m) => m.doc.kind === 'Service').map((m) => m.doc as ServiceDoc);
    const monitor = one('ServiceMonitor') as Doc & { spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string }[] } };
    const endpoint = monitor.spec.endpoints[0]!;
    // The ServiceMonitor selects exactly one Service: the one that lists not-ready pods too.
    const scraped = services.filter((s) => Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v));
    expect(scraped.map((s) => s.metadata.name)).toEqual(['bnpl-recon-metrics']);
    expect(scraped[0]!.spec.publishNotReadyAddresses).toBe(true);
    expect(scraped[0]!.spec.ports.find((p) => p.name === endpoint.port)?.targetPort).toBe('metrics');
    for (const s of services) {
      expect(s.spec.selector).toEqual(deployment.spec.template.metadata.labels);
      for (const p of s.spec.ports) expect(Object.keys(ports)).toContain(p.targetPort);
    }
    const server = await startMetricsServer(createRegistry(), { host: '127.0.0.1', port: 0, log: silentLogger() });
    try {
      for (const p of [annotations['prometheus.io/path'], endpoint.path]) {
        const res = await request(`${server.url}${p}`);
        await res.body.text();
        expect(res.statusCode, p).toBe(200);
      }
    } finally {
      await server.close();
    }
  });

  it('every setting it passes is one the config schema reads, and together they validate', () => {
    const env = [...(container.env ?? [])];
    // NODE_OPTIONS is Node's own (the daemon's heap limit), not a setting of ours.
    const names = [...Object.keys(configMap.data), ...Object.keys(secret.stringData), ...env.map((e) => e.name).filter((n) => n !== 'NODE_OPTIONS')];
    for (const name of names) expect(Object.keys(configSchema.shape), name).toContain(name);
    const merged = { ...configMap.data, ...secret.stringData, ...Object.fromEntries(env.map((e) => [e.name, e.value ?? ''])) };
    // The template's placeholder token is refused at start; filled in, the whole validates.
    expect(() => loadConfig(merged)).toThrow(/invalid setting OPERATOR_TOKEN: is a placeholder/);
    expect(() => loadConfig({ ...merged, ...STRONG_SECRETS })).not.toThrow();
    expect((container.envFrom ?? []).map((e) => e.secretRef?.name ?? e.configMapRef?.name)).toEqual([secret.metadata.name, configMap.metadata.name]);
  });

  it('the memory limit holds the daemon and a statement import at their heap limits, with room beyond the heap', () => {
    // What a Node process takes beyond its old-space limit (code, young generation, buffers): the
    // import child of a 128 MiB file is the one that reaches its heap limit.
    const NON_HEAP_MIB = 256;
    const mebibytes = (quantity: string | number | undefined): number => {
      const m = /^(\d+)(Mi|Gi)$/.exec(String(quantity));
      if (!m) throw new Error(`memory quantity ${quantity} is not in Mi or Gi`);
      return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
    };
    const limit = mebibytes(container.resources?.limits?.memory);
    const nodeOptions = container.env?.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
    const daemonHeap = Number(/--max-old-space-size=(\d+)/.exec(nodeOptions)?.[1]);
    expect(daemonHeap, 'the daemon\'s heap limit in NODE_OPTIONS').toBeGreaterThan(0);
    const merged = { ...configMap.data, ...secret.stringData, ...Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? ''])) };
    const importHeap = loadConfig({ ...merged, ...STRONG_SECRETS }).STATEMENT_IMPORT_MAX_MEMORY_MB;
    expect(importHeap).toBe(configMap.data.STATEMENT_IMPORT_MAX_MEMORY_MB === undefined ? defaults.STATEMENT_IMPORT_MAX_MEMORY_MB : Number(configMap.data.STATEMENT_IMPORT_MAX_MEMORY_MB));
    expect(limit).toBeGreaterThanOrEqual(importHeap + daemonHeap + 2 * NON_HEAP_MIB);
    expect(mebibytes(container.resources?.requests?.memory)).toBeLessThanOrEqual(limit);
  });

  it('trusts X-Forwarded-For from the ingress controller only, not from the pod network', () => {
    const config = loadConfig({ TRUSTED_PROXIES: configMap.data.TRUSTED_PROXIES ?? '' });
    for (const entry of config.TRUSTED_PROXIES) {
      const prefix = Number(entry.split('/')[1] ?? (entry.includes(':') ? 128 : 32));
      expect(prefix, entry).toBeGreaterThanOrEqual(entry.includes(':') ? 112 : 24);
    }
    // Another pod's address (the pod network is 10.244.0.0/16 in the examples): its X-Forwarded-For is ignored.
    const trusted = addressMatcher(config.TRUSTED_PROXIES);
    const [proxy] = config.TRUSTED_PROXIES;
    expect(clientAddress(proxy!.split('/')[0], '203.0.113.9', trusted)).toBe('203.0.113.9');
    expect(clientAddress('10.244.3.17', '203.0.113.9', trusted)).toBe('10.244.3.17');
    // And only the controller's pods reach the receiver's port.
    const policy = one('NetworkPolicy') as Doc & { spec: { ingress: { from: { podSelector?: { matchLabels: Record<string, string> } }[]; ports: { port: number }[] }[] } };
    const receiver = policy.spec.ingress.find((r) => r.ports.some((p) => p.port === defaults.PORT))!;
    for (const from of receiver.from) expect(from.podSelector?.matchLabels, 'a pod selector beside the namespace').toBeDefined();
  });

  it('RECON_DATA_DIR is on a writable volume under a read-only root', () => {
    const dataDir = container.env?.find((e) => e.name === 'RECON_DATA_DIR')?.value;
    expect(container.securityContext?.readOnlyRootFilesystem).toBe(true);
    const mount = container.volumeMounts?.find((m) => m.mountPath === dataDir);
    expect(mount, `a volume mounted at ${dataDir}`).toBeDefined();
    expect(mount?.readOnly ?? false).toBe(false);
    expect(pod.volumes?.find((v) => v.name === mount?.name)?.emptyDir).toBeDefined();
    expect(container.volumeMounts?.some((m) => m.mountPath === '/tmp')).toBe(true);
  });

  it('the statement inbox is on a claim every replica shares and that outlives the pods', () => {
    const dataDir = container.env?.find((e) => e.name === 'RECON_DATA_DIR')?.value;
    const mount = container.volumeMounts?.find((m) => m.mountPath === `${dataDir}/inbox`);
    expect(mount, 'a volume mounted at RECON_DATA_DIR/inbox').toBeDefined();
    const claimName = pod.volumes?.find((v) => v.name === mount?.name)?.persistentVolumeClaim?.claimName;
    expect(claimName).toBeDefined();
    const claim = all.map((m) => m.doc).find((d) => d.kind === 'PersistentVolumeClaim' && d.metadata.name === claimName) as Doc & { spec: { accessModes: string[] } };
    expect(claim, `a PersistentVolumeClaim ${claimName}`).toBeDefined();
    // Two replicas mount it at once.
    expect((deployment as unknown as { spec: { replicas: number } }).spec.replicas).toBeGreaterThan(1);
    expect(claim.spec.accessModes).toEqual(['ReadWriteMany']);
  });

  it('names the image with a registry, and kustomization.yaml sets it in one place', () => {
    const image = container.image ?? '';
    expect(image.split('/')[0]).toMatch(/\./);
    const kustomization = readManifests('kustomization.yaml')[0] as unknown as { images: { name: string; newTag: string }[] };
    expect(kustomization.images.map((i) => i.name)).toContain(image.split(':')[0]);
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(image.split(':')[1]).toBe(pkg.version);
    expect(kustomization.images[0]!.newTag).toBe(pkg.version);
  });

  it('meets Pod Security "restricted" and mounts no service-account token', () => {
    expect(pod.automountServiceAccountToken).toBe(false);
    expect((one('ServiceAccount') as { automountServiceAccountToken?: boolean }).automountServiceAccountToken).toBe(false);
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(pod.securityContext?.seccompProfile?.type).toBe('RuntimeDefault');
    expect(pod.hostNetwork ?? false).toBe(false);
    for (const c of pod.containers) {
      expect(c.securityContext?.allowPrivilegeEscalation).toBe(false);
      expect(c.securityContext?.capabilities?.drop).toEqual(['ALL']);
      expect(c.securityContext?.capabilities?.add ?? []).toEqual([]);
      expect(c.securityContext?.privileged ?? false).toBe(false);
    }
    for (const v of pod.volumes ?? []) expect(v.hostPath, v.name).toBeUndefined();
    // The pod's user is the image's.
    const user = /^USER\s+(\d+)/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1];
    expect(Number(user)).toBe(pod.securityContext?.runAsUser);
  });

  it('spreads replicas over nodes, drains inside the grace period, waits for migrations', () => {
    expect(pod.topologySpreadConstraints?.find((t) => t.topologyKey === 'kubernetes.io/hostname')?.whenUnsatisfiable).toBe('DoNotSchedule');
    const sleep = container.lifecycle?.preStop?.exec?.command;
    expect(sleep?.[0]).toBe('sleep');
    const drainSeconds = Number(sleep?.[1]) + (Number(configMap.data.SHUTDOWN_TIMEOUT_MS ?? defaults.SHUTDOWN_TIMEOUT_MS) / 1000);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(drainSeconds);
    const startup = container.startupProbe!;
    expect((startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3)).toBeGreaterThanOrEqual(120);
  });

  it('NetworkPolicy admits exactly the receiver and metrics ports, and lets DNS, Postgres and HTTPS out', () => {
    const policy = one('NetworkPolicy') as Doc & { spec: { ingress: { ports: { port: number }[] }[]; egress: { ports: { port: number }[] }[]; podSelector: { matchLabels: Record<string, string> } } };
    expect(policy.spec.podSelector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
    expect(policy.spec.ingress.flatMap((r) => r.ports.map((p) => p.port)).sort()).toEqual([defaults.PORT, defaults.METRICS_PORT].sort());
    expect(new Set(policy.spec.egress.flatMap((r) => r.ports.map((p) => p.port)))).toEqual(new Set([53, 5432, 443]));
    expect(new URL(secret.stringData.DATABASE_URL!).port).toBe('5432');
  });
});

/**
 * Where the daemon writes, against the volumes the Deployment gives it: past an emptyDir's sizeLimit
 * the kubelet evicts the pod, and whatever is on an emptyDir goes with the pod.
 */
describe('Kubernetes volumes against what the daemon writes', () => {
  const deployment = one('Deployment') as Doc & { spec: { template: { spec: IPodSpec } } };
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0] as IContainer;
  const configMap = one('ConfigMap') as Doc & { data: Record<string, string> };
  const env = Object.fromEntries((container.env ?? []).filter((e) => e.name !== 'NODE_OPTIONS').map((e) => [e.name, e.value ?? '']));
  const settings = { ...configMap.data, ...env };
  const claims = all.map((m) => m.doc).filter((d) => d.kind === 'PersistentVolumeClaim') as (Doc & { spec: { accessModes: string[] } })[];

  /** The volume a path is written to: the mount with the longest matching mountPath. */
  const volumeOf = (file: string) => {
    const mount = (container.volumeMounts ?? [])
      .filter((m) => file === m.mountPath || file.startsWith(`${m.mountPath}/`))
      .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
    return pod.volumes?.find((v) => v.name === mount?.name);
  };
  /** A shared claim that outlives the pods: a PersistentVolumeClaim of these manifests, ReadWriteMany (two replicas mount it). */
  const expectSharedClaim = (file: string) => {
    const claimName = volumeOf(file)?.persistentVolumeClaim?.claimName;
    expect(claimName, `${file} is on ${volumeOf(file)?.name}, not a claim`).toBeDefined();
    expect(claims.find((c) => c.metadata.name === claimName)?.spec.accessModes, claimName).toEqual(['ReadWriteMany']);
  };
  const mebibytes = (q: string): number => {
    const m = /^(\d+)(Mi|Gi)$/.exec(q);
    if (!m) throw new Error(`quantity ${q}`);
    return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
  };

  it('/tmp holds the operator uploads the daemon accepts at once (each written whole to os.tmpdir() before import)', () => {
    const config = loadConfig(settings);
    const tmp = volumeOf('/tmp');
    expect(tmp?.emptyDir, 'an emptyDir at /tmp').toBeDefined();
    const limitMiB = mebibytes(String(tmp!.emptyDir!.sizeLimit ?? '0Mi'));
    const neededMiB = (MAX_UPLOADS_AT_ONCE * config.OPERATOR_UPLOAD_MAX_BYTES) / (1024 * 1024);
    expect(neededMiB).toBeGreaterThan(64);
    expect(limitMiB, `${MAX_UPLOADS_AT_ONCE} uploads of OPERATOR_UPLOAD_MAX_BYTES`).toBeGreaterThanOrEqual(neededMiB);
  });

  it('the payout report inbox (RECON_DATA_DIR/payout-inbox) is on a shared claim like the statement inbox, not on the per-pod emptyDir', () => {
    const config = loadConfig(settings);
    expectSharedClaim(path.posix.join(config.RECON_DATA_DIR, 'inbox'));
    expectSharedClaim(path.posix.join(config.RECON_DATA_DIR, 'payout-inbox'));
  });

  it('with DELIVERY_RETENTION_MONTHS set, the archive of retired months (the only copy of their raw deliveries) is on a shared claim, not a per-pod emptyDir', () => {
    const config = loadConfig({ ...settings, DELIVERY_RETENTION_MONTHS: '12' });
    expectSharedClaim(archiveDirectory(config));
  });

  it('the payout inbox and the archive are not inside the statement inbox on its claim (whose scan would meet them)', () => {
    const config = loadConfig(settings);
    /** Where a path lands: its claim, and the folder inside the claim (the mount's subPath, then the rest). */
    const onClaim = (file: string) => {
      const mount = (container.volumeMounts ?? [])
        .filter((m) => file === m.mountPath || file.startsWith(`${m.mountPath}/`))
        .sort((a, b) => b.mountPath.length - a.mountPath.length)[0]!;
      return { claim: volumeOf(file)?.persistentVolumeClaim?.claimName, folder: path.posix.join('/', mount.subPath ?? '', path.posix.relative(mount.mountPath, file)) };
    };
    const statements = onClaim(path.posix.join(config.RECON_DATA_DIR, 'inbox'));
    for (const dir of [path.posix.join(config.RECON_DATA_DIR, 'payout-inbox'), archiveDirectory({ ...config, DELIVERY_ARCHIVE_DIR: undefined })]) {
      const there = onClaim(dir);
      const inside = there.claim === statements.claim && `${there.folder}/`.startsWith(`${statements.folder.replace(/\/$/, '')}/`);
      expect(inside, `${dir} is ${there.folder} on ${there.claim}, the statement inbox ${statements.folder}`).toBe(false);
    }
  });
});
