import { request } from 'undici';

/** What one replica says about itself: leader gauges from /metrics, /readyz's status and body. */
export interface ReplicaView {
  poll: boolean;
  reconcile: boolean;
  rssBytes: number;
  readyStatus: number;
  ready: { status?: string; leader?: { poll?: boolean; reconcile?: boolean } };
}

/** The value of an unlabelled sample in Prometheus text, or undefined. */
export function metricValue(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

export async function getText(url: string, timeoutMs = 2000): Promise<{ status: number; text: string }> {
  const r = await request(url, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  return { status: r.statusCode, text: await r.body.text() };
}

/** Reads a replica's leader gauges and readiness; undefined when it does not answer (killed). */
export async function probeReplica(url: string, metricsUrl: string): Promise<ReplicaView | undefined> {
  try {
    const [metrics, ready] = await Promise.all([getText(metricsUrl), getText(`${url}/readyz`)]);
    return {
      poll: metricValue(metrics.text, 'bnpl_recon_poll_lock_held') === 1,
      reconcile: metricValue(metrics.text, 'bnpl_recon_reconcile_lock_held') === 1,
      rssBytes: metricValue(metrics.text, 'process_resident_memory_bytes') ?? 0,
      readyStatus: ready.status,
      ready: JSON.parse(ready.text) as ReplicaView['ready'],
    };
  } catch {
    return undefined;
  }
}
