#!/bin/sh
# Installs a built checkout as the bnpl-recon systemd service, in one command:
#   npm ci && npm run build && npm prune --omit=dev
#   sudo ops/systemd/install.sh            # or: ops/systemd/install.sh /tmp/root  (a staging root)
# Copies ops/systemd/install-files.txt to ROOT/opt/bnpl-recon, the unit, the sysusers entry, the
# `bnpl-recon` command (bnpl-recon-cli.sh, to ROOT/usr/local/bin) and, unless one exists, the
# settings template to ROOT/etc/bnpl-recon/env. It never starts the
# service: it prints the commands that do. A Node 22+ runtime is yours to provide
# (/opt/bnpl-recon/node/bin or the unit's PATH).
set -eu
ROOT="${1:-}"
cd "$(dirname "$0")/../.."
if [ ! -f dist/src/cli.js ]; then
  echo "install.sh: dist/ is missing: run 'npm ci && npm run build && npm prune --omit=dev' in this checkout first" >&2
  exit 1
fi
APP="$ROOT/opt/bnpl-recon"
mkdir -p "$APP"
grep -v -e '^#' -e '^$' ops/systemd/install-files.txt | while read -r item; do
  if [ ! -e "$item" ]; then echo "install.sh: $item is missing from this checkout" >&2; exit 1; fi
  dir=$(dirname "$item")
  mkdir -p "$APP/$dir"
  rm -rf "${APP:?}/$item"
  cp -R "$item" "$APP/$dir/"
done
chmod 0755 "$APP/bin/bnpl-recon.js"
install -d -m 0755 "$ROOT/usr/lib/sysusers.d" "$ROOT/etc/systemd/system"
install -m 0644 ops/systemd/bnpl-recon.sysusers "$ROOT/usr/lib/sysusers.d/bnpl-recon.conf"
install -m 0644 ops/systemd/bnpl-recon.service "$ROOT/etc/systemd/system/bnpl-recon.service"
# The runbook's `bnpl-recon …` commands: the launcher with the unit's node and settings.
install -d -m 0755 "$ROOT/usr/local/bin"
install -m 0755 ops/systemd/bnpl-recon-cli.sh "$ROOT/usr/local/bin/bnpl-recon"
install -d -m 0750 "$ROOT/etc/bnpl-recon"
if [ ! -e "$ROOT/etc/bnpl-recon/env" ]; then
  install -m 0640 .env.example "$ROOT/etc/bnpl-recon/env"
fi
# Group bnpl-recon on the directory and the file, so the service user (and `sudo -u bnpl-recon
# bnpl-recon …`) can read the settings; systemd itself reads EnvironmentFile= as root.
if [ -z "$ROOT" ] && getent group bnpl-recon >/dev/null 2>&1; then chgrp bnpl-recon /etc/bnpl-recon /etc/bnpl-recon/env; fi
echo "installed to ${ROOT:-/}opt/bnpl-recon. Next:"
echo "  systemd-sysusers                       # the bnpl-recon user"
echo "  chgrp bnpl-recon /etc/bnpl-recon /etc/bnpl-recon/env && edit the env file (DATABASE_URL, PROVIDER_*)"
echo "  systemctl daemon-reload && systemctl enable --now bnpl-recon"
