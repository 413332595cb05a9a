#!/bin/bash
# /usr/local/bin/bnpl-recon (installed by ops/systemd/install.sh): the CLI with the service's own
# settings, as bnpl-recon.service runs it. Without it the runbook's `bnpl-recon …` commands did
# not run on a systemd install: nothing put the launcher on PATH, and its `#!/usr/bin/env node`
# on a login PATH finds Debian 12's node 18, which the launcher refuses (exit 2).
# Like the unit: PATH with /opt/bnpl-recon/node/bin first, WorkingDirectory /opt/bnpl-recon,
# RECON_DATA_DIR=/var/lib/bnpl-recon unless the settings file sets it (systemd lets
# EnvironmentFile= override Environment=), then the settings file, and nothing from the caller's
# environment (the daemon sees none of it either).
# The settings file is read as systemd's EnvironmentFile= reads it, not by the shell (its values are
# never evaluated) and not by node --env-file, which cuts an unquoted value at a `#`
# (PROVIDER_API_KEY=ab#cd is ab#cd for the service): a line starting with # or ; is a comment,
# KEY=VALUE otherwise, leading and trailing blanks dropped, one pair of enclosing quotes removed.
set -eu
ENV_FILE=/etc/bnpl-recon/env
APP=/opt/bnpl-recon
if [ ! -r "$ENV_FILE" ]; then
  echo "bnpl-recon: cannot read $ENV_FILE (mode 0640 root:bnpl-recon): run as the service user, e.g. sudo -u bnpl-recon bnpl-recon $*" >&2
  exit 2
fi
settings=(RECON_DATA_DIR=/var/lib/bnpl-recon)
while IFS= read -r line || [ -n "$line" ]; do
  line="${line#"${line%%[![:space:]]*}"}"
  line="${line%"${line##*[![:space:]]}"}"
  case "$line" in '' | '#'* | ';'*) continue ;; esac
  key="${line%%=*}"
  [ "$key" != "$line" ] || continue
  key="${key%"${key##*[![:space:]]}"}"
  [[ "$key" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
  value="${line#*=}"
  value="${value#"${value%%[![:space:]]*}"}"
  if [[ "$value" =~ ^\"(.*)\"$ || "$value" =~ ^\'(.*)\'$ ]]; then value="${BASH_REMATCH[1]}"; fi
  settings+=("$key=$value")
done < "$ENV_FILE"
cd "$APP"
exec env -i PATH="$APP/node/bin:/usr/local/bin:/usr/bin:/bin" "${settings[@]}" node "$APP/bin/bnpl-recon.js" "$@"
