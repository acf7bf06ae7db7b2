#!/usr/bin/env bash
# Makes sure PostgreSQL and Redis answer where the service will look for them, when that is this
# machine: the addresses of DATABASE_URL (or DATABASE_URL_FILE) and REDIS_URL, with the service's
# defaults (src/config/app-config.ts: postgres://postgres@127.0.0.1:5432/glimpse,
# redis://127.0.0.1:6379). Run by scripts/ensure-system-deps.sh, so by `npm run setup` and before
# `npm test` (docs/development.md, "A fresh machine").
#
# For each of them whose address is local (127.0.0.0/8, localhost, ::1 or a Unix socket) and where
# nothing answers:
# - as root with apt-get: installs Debian's package (`postgresql`, `redis-server`) when missing
#   (`apt-get update` first) and starts it, saying so:
#   PostgreSQL: the cluster on the URL's port (a new one when there is none), with trust auth for
#   127.0.0.1 and ::1 in its pg_hba.conf, started with pg_ctlcluster, and the URL's role when it is
#   not `postgres`; Redis: `redis-server --daemonize yes` bound to 127.0.0.1 and ::1 on the URL's port;
# - otherwise: says what to install and exits 1.
# A remote address is never connected to nor changed. Quiet when both answer (or are remote).
#
# GLIMPSE_SETUP_STUB_INSTALL (set only by test/unit/local-services.spec.ts): `1` prints each command that
# would change the machine ("would run: …", on stderr) instead of running it, and does not wait for the
# server; `absent` does the same and also takes Debian's postgresql and redis-server as not installed.
set -euo pipefail
cd "$(dirname "$0")/.."

stub="${GLIMPSE_SETUP_STUB_INSTALL:-}"

# Runs a command that changes the machine (or, stubbed, prints it).
run() {
  if [ -n "$stub" ]; then
    echo "would run: $*" >&2
  else
    "$@"
  fi
}

# `kind host port user` of DATABASE_URL (kind `postgres`) or REDIS_URL (kind `redis`) when its address is
# on this machine; nothing when it is remote. The host is an address, `localhost`, or a socket directory.
local_address() {
  node -e '
    const fs = require("fs");
    const kind = process.argv[1];
    const name = kind === "postgres" ? "DATABASE_URL" : "REDIS_URL";
    // The service reads DATABASE_URL_FILE too (FILE_SECRETS in src/config/app-config.ts); empty is unset.
    let url = process.env[name] || "";
    const file = process.env[name + "_FILE"];
    if (!url && file) url = fs.readFileSync(file, "utf8").replace(/\r?\n$/, "");
    if (!url) url = kind === "postgres" ? "postgres://postgres@127.0.0.1:5432/glimpse" : "redis://127.0.0.1:6379";
    let host, port, user;
    if (kind === "postgres") {
      // pg`s own parser, as src/database/setup-database.ts: it takes the Unix-socket form too.
      const c = require("pg-connection-string").parse(url);
      host = c.host || "localhost";
      port = c.port || "5432";
      user = c.user || "postgres";
    } else {
      const u = new URL(url);
      host = u.hostname || "localhost";
      port = u.port || "6379";
      user = "-";
    }
    host = host.replace(/^\[(.*)\]$/, "$1");
    const local = host.startsWith("/") || host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
    if (local) process.stdout.write([kind, host, port, user].join(" ") + "\n");
  ' "$1"
}

# Whether a server answers at `host port`: a TCP connection within 2 s, or the socket file of a
# PostgreSQL socket directory.
answers() {
  local host=$1 port=$2
  if [ "${host#/}" != "$host" ]; then
    [ -S "$host/.s.PGSQL.$port" ]
  else
    timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$host" "$port" 2>/dev/null
  fi
}

# Waits up to 30 s for `host port` to answer (not when stubbed).
wait_for() {
  [ -n "$stub" ] && return 0
  for _ in $(seq 60); do
    answers "$1" "$2" && return 0
    sleep 0.5
  done
  echo "$3 did not answer at $1:$2 after 30 s." >&2
  return 1
}

# Whether Debian's `postgresql` (a server and pg_ctlcluster) or `redis-server` is installed.
installed() {
  [ "$stub" = absent ] && return 1
  if [ "$1" = postgresql ]; then
    ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && command -v pg_ctlcluster >/dev/null 2>&1
  else
    command -v redis-server >/dev/null 2>&1
  fi
}

# Installs Debian packages when missing: `apt-get update` once, then `apt-get install`.
updated=
apt_install() {
  echo "Installing $* with apt-get…" >&2
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$updated" ]; then
    run apt-get update -q >/dev/null
    updated=1
  fi
  run apt-get install -y -q --no-install-recommends "$@" >/dev/null
}

# PostgreSQL on `port`, trust auth on loopback, with role `user`.
start_postgres() {
  local host=$1 port=$2 user=$3 version name status
  installed postgresql || apt_install postgresql
  # The cluster on that port, if any.
  read -r version name status < <(pg_lsclusters -h 2>/dev/null | awk -v p="$port" '$3 == p { print $1, $2, $4; exit }') || true
  if [ -z "${version:-}" ]; then
    version=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1)
    version=${version:-15}
    name=main
    [ -d "/etc/postgresql/$version/main" ] && name="glimpse-$port"
    status=down
    echo "PostgreSQL: creating cluster $version/$name on port $port…" >&2
    run pg_createcluster --port "$port" -o "listen_addresses=127.0.0.1,::1" "$version" "$name" >/dev/null
  fi
  local hba="/etc/postgresql/$version/$name/pg_hba.conf"
  # First matching line wins: trust on loopback goes first.
  for net in ::1/128 127.0.0.1/32; do
    if [ -n "$stub" ] || ! grep -Eq "^host[[:space:]]+all[[:space:]]+all[[:space:]]+${net//./\\.}[[:space:]]+trust" "$hba"; then
      run sed -i "1i host all all $net trust" "$hba"
    fi
  done
  if [ "$status" = online ]; then
    run pg_ctlcluster "$version" "$name" reload
  else
    run pg_ctlcluster "$version" "$name" start
  fi
  wait_for "$host" "$port" PostgreSQL
  if [ "$user" != postgres ]; then
    # psql interpolates :"u" (a quoted identifier) in what it reads from stdin.
    if [ -n "$stub" ]; then
      echo "would run: CREATE ROLE \"$user\" LOGIN CREATEDB (when missing)" >&2
    else
      runuser -u postgres -- psql -q -p "$port" -v u="$user" -d postgres >/dev/null <<'SQL'
SELECT format('CREATE ROLE %I LOGIN CREATEDB', :'u') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'u') \gexec
SQL
    fi
  fi
  echo "PostgreSQL: cluster $version/$name runs on port $port, trust auth for 127.0.0.1 and ::1." >&2
}

# Redis on `port`, bound to loopback (::1 when the machine has it).
start_redis() {
  local host=$1 port=$2 dir=/var/lib/redis
  installed redis-server || apt_install redis-server
  [ -d "$dir" ] || dir=/tmp
  run redis-server --daemonize yes --port "$port" --bind 127.0.0.1 -::1 --dir "$dir" >/dev/null
  wait_for "$host" "$port" Redis
  echo "Redis: redis-server runs on port $port, bound to 127.0.0.1 and ::1 (data in $dir)." >&2
}

can_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}

status=0
for kind in postgres redis; do
  read -r _ host port user < <(local_address "$kind") || continue
  answers "$host" "$port" && continue
  if [ "$kind" = postgres ]; then
    label=PostgreSQL variable=DATABASE_URL package=postgresql
  else
    label=Redis variable=REDIS_URL package=redis-server
  fi
  echo "$label: nothing answers at $host:$port ($variable)." >&2
  if can_install; then
    "start_$kind" "$host" "$port" "$user"
  else
    echo "Install and start it (e.g. sudo apt-get install $package, or run npm run setup as root), or set $variable to where it runs." >&2
    [ "$kind" = postgres ] && echo "Glimpse connects as '$user' with the password in DATABASE_URL, if any: e.g. trust auth for 127.0.0.1 and ::1 in pg_hba.conf." >&2
    status=1
  fi
done
exit $status
