#!/bin/sh
# /usr/local/bin/bnpl-recon (installed by ops/systemd/install.sh): the CLI with the service's own
# settings, as bnpl-recon.service runs it. Without it the runbook's `bnpl-recon …` commands did
# not run on a systemd install: nothing put the launcher on PATH, and its `#!/usr/bin/env node`
# on a login PATH finds Debian 12's node 18, which the launcher refuses (exit 2).
# Like the unit: PATH with /opt/bnpl-recon/node/bin first, WorkingDirectory /opt/bnpl-recon,
# RECON_DATA_DIR=/var/lib/bnpl-recon unless the settings file sets it (systemd lets
# EnvironmentFile= override Environment=), then the settings file, and nothing from the caller's
# environment (the daemon sees none of it either). Node reads the file itself (--env-file, the
# same KEY=VALUE lines as systemd's EnvironmentFile=): the shell never evaluates its values.
set -eu
ENV_FILE=/etc/bnpl-recon/env
APP=/opt/bnpl-recon
if [ ! -r "$ENV_FILE" ]; then
  echo "bnpl-recon: cannot read $ENV_FILE (mode 0640 root:bnpl-recon): run as the service user, e.g. sudo -u bnpl-recon bnpl-recon $*" >&2
  exit 2
fi
set -- "$APP/bin/bnpl-recon.js" "$@"
if ! grep -Eq '^[[:space:]]*(export[[:space:]]+)?RECON_DATA_DIR=' "$ENV_FILE"; then
  set -- RECON_DATA_DIR=/var/lib/bnpl-recon node "--env-file=$ENV_FILE" "$@"
else
  set -- node "--env-file=$ENV_FILE" "$@"
fi
cd "$APP"
exec env -i PATH="$APP/node/bin:/usr/local/bin:/usr/bin:/bin" "$@"
