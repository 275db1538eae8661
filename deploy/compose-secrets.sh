#!/usr/bin/env bash
# Writes the secret files deploy/compose.yaml mounts, into DIR (default: the
# secrets/ directory beside this script): a random PostgreSQL password, and
# sweepgate.toml with the matching database URL and the webhook secret
# ($SWEEPGATE_WEBHOOK_SECRET, or a random one, printed once so it can be
# pasted into the GitHub App). Existing files are never overwritten.
set -euo pipefail
dir=${1:-"$(cd "$(dirname "$0")" && pwd)/secrets"}
mkdir -p "$dir"
chmod 700 "$dir"
umask 077
random_hex() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

if [ -e "$dir/postgres_password" ] || [ -e "$dir/sweepgate.toml" ]; then
  echo "error: $dir already holds secrets; remove them first to regenerate" >&2
  exit 1
fi
password=$(random_hex)
admin_token=$(random_hex)
webhook_secret=${SWEEPGATE_WEBHOOK_SECRET:-$(random_hex)}
case $webhook_secret in
  *[\"\\,]*) echo "error: the webhook secret must not contain \" \\ or ," >&2; exit 1 ;;
esac
printf '%s' "$password" > "$dir/postgres_password"
cat > "$dir/sweepgate.toml" <<TOML
# Secret settings of sweepgate (SWEEPGATE_CONFIG). During a rotation list
# the new and the old webhook secret.
database-url = "postgres://sweepgate:${password}@postgres:5432/sweepgate"
webhook-secrets = ["${webhook_secret}"]
# The dashboard's login (and its retry action).
admin-token = "${admin_token}"
TOML
# The container runs as uid 10001; Docker Compose bind-mounts file secrets
# with the host's ownership and mode.
chmod 644 "$dir/postgres_password" "$dir/sweepgate.toml"
echo "wrote $dir/postgres_password and $dir/sweepgate.toml (with the dashboard's admin token: log in at <public URL>/login)"
if [ -z "${SWEEPGATE_WEBHOOK_SECRET:-}" ]; then
  echo "webhook secret (enter it in the GitHub App settings): $webhook_secret"
fi
