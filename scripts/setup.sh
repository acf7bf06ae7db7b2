#!/usr/bin/env bash
# One-time (and repeatable) local set-up: system packages, build, database, migrations, and a
# development account with a fresh API key, printed once, and its dashboard owner with a set-password link. Configuration comes from the environment
# (see docs/configuration.md); defaults suit a single machine with PostgreSQL and Redis on localhost.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-system-deps.sh
npm run build --silent
node dist/database/setup-database.js
node dist/database/run-migrations.js

email="${GLIMPSE_DEV_EMAIL:-dev@localhost}"
node dist/cli.js account:create --email "$email" --plan pro --json >/dev/null 2>&1 || true
key_json=$(node dist/cli.js key:create --account "$email" --name "setup $(date -u +%FT%TZ)" --json)
key=$(node -e 'process.stdout.write(JSON.parse(process.argv[1]).key)' "$key_json")
# The account's owner in the dashboard: created once; on later runs a fresh set-password link.
user_json=$(node dist/cli.js user:create --account "$email" --email "$email" --role owner --json 2>/dev/null \
  || node dist/cli.js user:reset-password --email "$email" --json)
set_password_url=$(node -e 'process.stdout.write(JSON.parse(process.argv[1]).setPasswordUrl)' "$user_json")
dashboard_url="${set_password_url%/set-password/*}"

cat <<MSG

Glimpse is set up. Development account: $email (plan pro).
Your API key (shown once, store it now):

  $key

Dashboard: $dashboard_url   (sign in as $email)
Set its password first (the link works once, for 24 hours):

  $set_password_url

Start the service with:  npm run start:local   (allows pages on this machine; production: npm start)
Try it:
  curl -X POST localhost:\${PORT:-3000}/v1/screenshot -H "Authorization: Bearer $key" \\
       -H 'Content-Type: application/json' -d '{"url":"http://127.0.0.1:3000/docs"}'
MSG
