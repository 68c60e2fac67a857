#!/usr/bin/env bash
# postgres.sh: a throwaway PostgreSQL cluster for the callback/pgstore tests.
#
#   eval "$(.ci/postgres.sh start)"          # start; exports the URL and dir
#   go test ./callback/pgstore/
#   .ci/postgres.sh stop "$CRYPTAPI_TEST_PGDIR"
#
# Sourcing works too and exports into the current shell:
#   source .ci/postgres.sh start ... source .ci/postgres.sh stop
#
# start initialises a cluster in a new temporary directory, listens on
# 127.0.0.1 only (trust authentication, no other addresses) with its unix
# socket inside that directory, waits until the server accepts connections,
# creates the database and prints on stdout, for eval:
#   export CRYPTAPI_TEST_DATABASE_URL=postgres://USER@127.0.0.1:PORT/DB?sslmode=disable
#   export CRYPTAPI_TEST_PGDIR=/tmp/cryptapi-pg.XXXXXX
# Everything else goes to stderr.
#
# stop [DIR] stops the server started in DIR (default $CRYPTAPI_TEST_PGDIR)
# and removes DIR.
#
# bin prints the directory of the server binaries start would use, and
# fails when there is none (.ci/install-tools asks it).
#
# initdb refuses to run as root, so as root the cluster belongs to an
# unprivileged user: $CRYPTAPI_PG_USER if set, else "postgres" if it exists,
# else "pgtest" (created with useradd). Other knobs:
#   CRYPTAPI_PG_BIN   directory of the server binaries
#                     (default /usr/lib/postgresql/15/bin, else the newest
#                     /usr/lib/postgresql/*/bin, else pg_ctl on PATH)
#   CRYPTAPI_PG_PORT  first port to try (default 54329; the next free one
#                     of the following 50 is used if it is taken)
#   CRYPTAPI_PG_DB    database name (default cryptapi_test)
#   CRYPTAPI_PG_TMP   parent of the temporary directory (default /tmp; it
#                     must be reachable by the cluster user)

_cpg_log() { printf 'postgres.sh: %s\n' "$*" >&2; }

_cpg_bin() {
	if [[ -n "${CRYPTAPI_PG_BIN:-}" ]]; then
		[[ -x "$CRYPTAPI_PG_BIN/initdb" ]] || return 1
		printf '%s\n' "$CRYPTAPI_PG_BIN"
		return
	fi
	if [[ -x /usr/lib/postgresql/15/bin/initdb ]]; then
		printf '%s\n' /usr/lib/postgresql/15/bin
		return
	fi
	local d newest=""
	for d in /usr/lib/postgresql/*/bin; do
		[[ -x "$d/initdb" ]] && newest="$d"
	done
	if [[ -n "$newest" ]]; then
		printf '%s\n' "$newest"
		return
	fi
	if command -v pg_ctl >/dev/null 2>&1; then
		dirname "$(command -v pg_ctl)"
		return
	fi
	return 1
}

# _cpg_user prints the OS user that owns the cluster, creating it if needed.
_cpg_user() {
	if [[ "$(id -u)" != 0 ]]; then
		id -un
		return
	fi
	local u="${CRYPTAPI_PG_USER:-}"
	if [[ -z "$u" ]]; then
		if id postgres >/dev/null 2>&1; then
			u=postgres
		else
			u=pgtest
		fi
	fi
	if ! id "$u" >/dev/null 2>&1; then
		_cpg_log "creating system user $u"
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$u" >&2 || return 1
	fi
	printf '%s\n' "$u"
}

# _cpg_as USER CMD... runs CMD as USER (directly when already that user).
_cpg_as() {
	local u="$1"
	shift
	# From /, since the caller's directory may be closed to USER.
	(
		cd / || exit 1
		if [[ "$(id -un)" == "$u" ]]; then
			"$@"
		elif command -v runuser >/dev/null 2>&1; then
			runuser -u "$u" -- "$@"
		else
			setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- "$@"
		fi
	)
}

# _cpg_port_busy PORT succeeds when something listens on 127.0.0.1:PORT.
_cpg_port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

_cpg_start() {
	local bin user tmp dir port db first tries i started=""
	bin="$(_cpg_bin)" || { _cpg_log "no PostgreSQL server binaries found (install postgresql, or set CRYPTAPI_PG_BIN to the directory holding initdb)"; return 1; }
	user="$(_cpg_user)" || { _cpg_log "cannot find or create an unprivileged user"; return 1; }
	tmp="${CRYPTAPI_PG_TMP:-/tmp}"
	db="${CRYPTAPI_PG_DB:-cryptapi_test}"
	first="${CRYPTAPI_PG_PORT:-54329}"

	dir="$(mktemp -d "$tmp/cryptapi-pg.XXXXXX")" || return 1
	: >"$dir/.cryptapi-pg"
	mkdir -p "$dir/data" "$dir/sock"
	if [[ "$(id -u)" == 0 ]]; then
		chown -R "$user" "$dir" || return 1
	fi
	chmod 700 "$dir/data"

	if ! _cpg_as "$user" "$bin/initdb" -D "$dir/data" -U "$user" \
		--auth=trust --encoding=UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1; then
		_cpg_log "initdb failed:"
		cat "$dir/initdb.log" >&2
		rm -rf "$dir"
		return 1
	fi
	# Only the loopback address and the private socket directory; trust
	# authentication is what initdb --auth=trust wrote for local and host
	# loopback entries.
	cat >>"$dir/data/postgresql.conf" <<-EOF
		listen_addresses = '127.0.0.1'
		unix_socket_directories = '$dir/sock'
		max_connections = 300
	EOF

	printf '%s\n' "$bin" >"$dir/.bin"
	printf '%s\n' "$user" >"$dir/.user"

	for ((i = 0; i <= 50; i++)); do
		port=$((first + i))
		_cpg_port_busy "$port" && continue
		if _cpg_as "$user" "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" \
			-o "-p $port" -w -t 30 start >/dev/null 2>&1; then
			# Confirm over TCP, with bounded tries.
			for ((tries = 0; tries < 50; tries++)); do
				if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U "$user" -d postgres; then
					started=1
					break
				fi
				sleep 0.1
			done
		fi
		[[ -n "$started" ]] && break
		_cpg_as "$user" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1
	done
	if [[ -z "$started" ]]; then
		_cpg_log "server did not become ready; log follows"
		cat "$dir/postgres.log" >&2 2>/dev/null
		rm -rf "$dir"
		return 1
	fi
	if ! _cpg_as "$user" "$bin/createdb" -h "$dir/sock" -p "$port" -U "$user" "$db" >&2; then
		_cpg_log "createdb failed"
		_cpg_stop "$dir"
		return 1
	fi
	_cpg_log "PostgreSQL ($("$bin/postgres" --version)) ready on 127.0.0.1:$port, dir $dir"
	printf "export CRYPTAPI_TEST_DATABASE_URL='%s'\n" "postgres://$user@127.0.0.1:$port/$db?sslmode=disable"
	printf "export CRYPTAPI_TEST_PGDIR='%s'\n" "$dir"
}

_cpg_stop() {
	local dir="${1:-${CRYPTAPI_TEST_PGDIR:-}}" bin user
	if [[ -z "$dir" ]]; then
		_cpg_log "usage: postgres.sh stop DIR (or set CRYPTAPI_TEST_PGDIR)"
		return 2
	fi
	if [[ ! -f "$dir/.cryptapi-pg" ]]; then
		_cpg_log "$dir was not made by postgres.sh start; not touching it"
		return 1
	fi
	bin="$(cat "$dir/.bin" 2>/dev/null)" || bin="$(_cpg_bin)"
	user="$(cat "$dir/.user" 2>/dev/null)" || user="$(id -un)"
	if [[ -f "$dir/data/postmaster.pid" ]]; then
		_cpg_as "$user" "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >&2 ||
			_cpg_as "$user" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >&2
	fi
	rm -rf "$dir"
	_cpg_log "stopped and removed $dir"
}

_cpg_main() {
	case "${1:-}" in
	start) _cpg_start ;;
	stop) _cpg_stop "${2:-}" ;;
	bin) _cpg_bin ;;
	*)
		_cpg_log "usage: postgres.sh start | postgres.sh stop [DIR] | postgres.sh bin"
		return 2
		;;
	esac
}

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
	# Sourced: act on the current shell's environment.
	case "${1:-}" in
	start)
		_cpg_out="$(_cpg_main start)" && eval "$_cpg_out"
		unset _cpg_out
		;;
	stop)
		_cpg_main stop "${2:-}" && unset CRYPTAPI_TEST_DATABASE_URL CRYPTAPI_TEST_PGDIR
		;;
	*) _cpg_main "$@" ;;
	esac
else
	set -u
	_cpg_main "$@"
fi
