#!/usr/bin/env bash
# Builds, starts, stops and reports on a local MatrixOne server for development and CI,
# without Docker. The server is built from the Go module proxy at a pinned version.
#
#   scripts/matrixone.sh start    build if needed, start, wait until it answers
#   scripts/matrixone.sh stop     stop the server started here
#   scripts/matrixone.sh kill     SIGKILL the server started here (fault tests), no wait
#   scripts/matrixone.sh status   say whether it runs, with its pid, log and DSN
#   scripts/matrixone.sh build    only build (or find the cached binary)
#   scripts/matrixone.sh dsn      print the DSN to use
#
# Environment:
#   MO_VERSION   module version to build (default: the 2024-11 main-branch build)
#   MO_HOME      working folder: binary, config, data, log, pid (default ~/.cache/day1-matrixone)
#   MO_WAIT      seconds to wait for readiness (default 180)
#   MO_CACHE     memory the CN gives its cache of the shared file service, where the
#                tables' blocks are read from (default a quarter of the machine's memory,
#                at most 4GB, at least the server's own default of 512MB). A block read
#                that misses it is decompressed again, column by column: with 512MB, a
#                few 100k-row tables already evict each other (docs/matrixone.md).
#   MO_FLUSH     the TN's flush interval (for example 6s; default the server's own, 1m).
#                The TN writes a table's recent rows out to objects after five times
#                this interval, or at 20MB of them, and on 3.x a DATA BRANCH CREATE
#                copies the rows not written out yet: a fork right after many writes
#                costs ten times one from a table written out (docs/matrixone.md).
#   MO_DEBUG_HTTP  host:port where the server serves Go's pprof endpoints (for example
#                127.0.0.1:6060, then /debug/pprof/profile?seconds=30 for a CPU profile);
#                default none.
#   MO_PORT      SQL port (default 6001). Another port starts a second, independent
#                server beside the first, with the same cached binary: its own run folder
#                (MO_RUN), data and log, and every other port it listens on moved by the
#                same offset: CN 18000+, TN 19000+, log service 32000-32002, status 7001,
#                and its own unix socket.
#   MO_RUN       run folder: config, data, log, pid (default $MO_HOME/run for port 6001,
#                $MO_HOME/run-$MO_PORT for another port)
set -euo pipefail

MO_VERSION=${MO_VERSION:-v0.7.1-0.20241116071202-78f88591bfc4}
MO_HOME=${MO_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/day1-matrixone}
MO_WAIT=${MO_WAIT:-180}
MO_CACHE=${MO_CACHE:-}
MO_FLUSH=${MO_FLUSH:-}
MO_DEBUG_HTTP=${MO_DEBUG_HTTP:-}
if [[ -n $MO_DEBUG_HTTP && ! $MO_DEBUG_HTTP =~ ^[A-Za-z0-9.-]*:[0-9]+$ ]]; then
	echo "matrixone: MO_DEBUG_HTTP must be host:port, such as 127.0.0.1:6060, not '$MO_DEBUG_HTTP'" >&2
	exit 2
fi
MO_PORT=${MO_PORT:-6001}
if ! [[ $MO_PORT =~ ^[0-9]+$ ]] || ((MO_PORT < 1025 || MO_PORT > 59999)); then
	echo "matrixone: MO_PORT must be a port number between 1025 and 59999, not '$MO_PORT'" >&2
	exit 2
fi
SRC="$MO_HOME/src-$MO_VERSION"
BIN="$MO_HOME/bin/mo-service-$MO_VERSION"
if ((MO_PORT == 6001)); then
	RUN=${MO_RUN:-$MO_HOME/run}
else
	RUN=${MO_RUN:-$MO_HOME/run-$MO_PORT}
fi
PIDFILE="$RUN/mo.pid"
LOG="$RUN/mo.log"
DSN="root:111@tcp(127.0.0.1:$MO_PORT)/"

say() { printf 'matrixone: %s\n' "$*" >&2; }

running() {
	[[ -f $PIDFILE ]] || return 1
	local pid
	pid=$(cat "$PIDFILE")
	kill -0 "$pid" 2>/dev/null || return 1
	# A killed server that its parent has not reaped yet is a zombie: it is gone.
	[[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]
}

port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$MO_PORT") 2>/dev/null
}

ready() {
	# A MySQL-protocol server speaks first: a greeting on connect means it accepts clients.
	if command -v mysql >/dev/null 2>&1; then
		mysql -h127.0.0.1 -P"$MO_PORT" -uroot -p111 -e 'select 1' >/dev/null 2>&1
	else
		port_open && timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$MO_PORT; head -c 5 <&3 >/dev/null" 2>/dev/null
	fi
}

build() {
	if [[ -x $BIN ]]; then
		say "using cached binary $BIN"
		return
	fi
	command -v go >/dev/null || { say "go is not installed"; exit 1; }
	mkdir -p "$MO_HOME/bin" "$MO_HOME/tmp"
	if [[ ! -d $SRC ]]; then
		say "downloading github.com/matrixorigin/matrixone@$MO_VERSION from the Go module proxy"
		local mod="$MO_HOME/tmp/fetch"
		rm -rf "$mod" && mkdir -p "$mod"
		(cd "$mod" && go mod init fetch >/dev/null 2>&1 &&
			go mod download -json "github.com/matrixorigin/matrixone@$MO_VERSION" >download.json)
		local dir
		dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' "$mod/download.json")
		[[ -n $dir && -d $dir ]] || { say "module download failed: $(cat "$mod/download.json")"; exit 1; }
		cp -r "$dir" "$SRC.partial"
		chmod -R u+w "$SRC.partial"
		mv "$SRC.partial" "$SRC"
	fi
	say "building libmo (cgo)"
	make -C "$SRC/cgo" >"$MO_HOME/tmp/cgo.log" 2>&1 || { tail -20 "$MO_HOME/tmp/cgo.log"; exit 1; }
	say "building mo-service (several minutes on 2 cores)"
	(cd "$SRC" && CGO_CFLAGS="-I$SRC/cgo" CGO_LDFLAGS="-L$SRC/cgo -lm -lmo" \
		go build -trimpath -o "$BIN.partial" ./cmd/mo-service) >"$MO_HOME/tmp/build.log" 2>&1 ||
		{ tail -30 "$MO_HOME/tmp/build.log"; exit 1; }
	mv "$BIN.partial" "$BIN"
	say "built $BIN"
}

start() {
	if running; then
		say "already running (pid $(cat "$PIDFILE"))"
		wait_ready
		return
	fi
	rm -f "$PIDFILE"
	# A server killed moments ago may still hold its port while its threads exit.
	for _ in $(seq 1 100); do
		port_open || break
		sleep 0.1
	done
	if port_open; then
		say "port $MO_PORT is taken by a process not started here; stop it or use its DSN"
		exit 1
	fi
	build
	mkdir -p "$RUN"
	if [[ ! -d $RUN/etc/launch ]]; then
		mkdir -p "$RUN/etc"
		rm -rf "$RUN/etc/launch.partial"
		cp -r "$SRC/etc/launch" "$RUN/etc/launch.partial"
		chmod -R u+w "$RUN/etc/launch.partial"
		move_ports "$RUN/etc/launch.partial"
		mv "$RUN/etc/launch.partial" "$RUN/etc/launch"
	fi
	cache_config "$RUN/etc/launch"
	flush_config "$RUN/etc/launch"
	say "starting from $RUN (log $LOG)"
	# The child writes its own pid and then becomes the server, so the pid file names the
	# server process itself whatever setsid does.
	# The whole subshell's output goes to the log, so that no pipe of the caller stays open
	# while the server runs.
	local debug=()
	[[ -z $MO_DEBUG_HTTP ]] || debug=(-debug-http "$MO_DEBUG_HTTP")
	(cd "$RUN" && PIDFILE="$PIDFILE" BIN="$BIN" exec setsid bash -c 'echo $$ >"$PIDFILE"; exec "$BIN" -launch ./etc/launch/launch.toml "$@"' bash "${debug[@]}") \
		>>"$LOG" 2>&1 </dev/null &
	for _ in $(seq 1 50); do
		[[ -s $PIDFILE ]] && break
		sleep 0.1
	done
	wait_ready
}

# move_ports rewrites the launch config in $1 so that every port the server listens on
# is moved by MO_PORT-6001 and the unix socket lives in the run folder. Port 6001 keeps
# the source tree's config as it is.
move_ports() {
	local dir=$1 off=$((MO_PORT - 6001))
	((off != 0)) || return 0
	local raft=$((32000 + off)) svc=$((32001 + off)) gossip=$((32002 + off))
	sed -i "s/^port-base = 18000$/port-base = $((18000 + off))/" "$dir/cn.toml"
	sed -i "s/^port-base = 19000$/port-base = $((19000 + off))/" "$dir/tn.toml"
	if ! grep -q "^port-base = $((18000 + off))$" "$dir/cn.toml" || ! grep -q "^port-base = $((19000 + off))$" "$dir/tn.toml"; then
		say "the launch config in $dir has no port-base line to move"
		exit 1
	fi
	local f
	for f in cn tn log; do
		printf '\n[hakeeper-client]\nservice-addresses = ["127.0.0.1:%d"]\n' "$svc" >>"$dir/$f.toml"
		# Newer configs have an [observability] table already: a second one is an error.
		if grep -q '^\[observability\]$' "$dir/$f.toml"; then
			sed -i "s/^status-port = 7001$/status-port = $((7001 + off))/" "$dir/$f.toml"
		else
			printf '\n[observability]\nstatus-port = %d\n' $((7001 + off)) >>"$dir/$f.toml"
		fi
	done
	printf '\n[cn.frontend]\nport = %d\nunix-socket = "%s"\n' "$MO_PORT" "$RUN/mysql.sock" >>"$dir/cn.toml"
	printf '\n[logservice]\nlogservice-address = "127.0.0.1:%d"\nraft-address = "127.0.0.1:%d"\ngossip-address = "127.0.0.1:%d"\ngossip-seed-addresses = ["127.0.0.1:%d"]\n' \
		"$svc" "$raft" "$gossip" "$gossip" >>"$dir/log.toml"
}

# cache_config sets, in the CN's config in $1, the memory capacity of its cache of the
# shared file service: MO_CACHE, or a quarter of the machine's memory between 512MB and
# 4GB. The section sits between two marker lines, replaced at every start, so that a
# run folder made before keeps up with MO_CACHE. The file service itself is the one the
# server makes by default (local disk under the data folder).
cache_config() {
	local f=$1/cn.toml size=$MO_CACHE
	if [[ -z $size ]]; then
		local kb mb
		kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
		mb=$((kb / 4096))
		((mb <= 4096)) || mb=4096
		((mb >= 512)) || mb=512
		size="${mb}MB"
	fi
	if ! [[ $size =~ ^[0-9]+(MB|GB)$ ]]; then
		say "MO_CACHE must be a size such as 512MB or 4GB, not '$size'"
		exit 2
	fi
	local data
	data=$(sed -n 's/^data-dir = "\(.*\)"$/\1/p' "$f" | head -1)
	sed -i '/^# day1: shared file service cache$/,/^# day1: end of shared file service cache$/d' "$f"
	printf '# day1: shared file service cache\n[[fileservice]]\nname = "SHARED"\nbackend = "DISK"\ndata-dir = "%s/shared"\n\n[fileservice.cache]\nmemory-capacity = "%s"\n# day1: end of shared file service cache\n' \
		"${data:-./mo-data}" "$size" >>"$f"
}

# flush_config sets, in the TN's config in $1, its flush interval to MO_FLUSH, between
# two marker lines replaced at every start; without MO_FLUSH the server's default holds.
flush_config() {
	local f=$1/tn.toml
	sed -i '/^# day1: flush interval$/,/^# day1: end of flush interval$/d' "$f"
	[[ -n $MO_FLUSH ]] || return 0
	if ! [[ $MO_FLUSH =~ ^[0-9]+(ms|s|m)$ ]]; then
		say "MO_FLUSH must be a duration such as 6s or 1m, not '$MO_FLUSH'"
		exit 2
	fi
	if grep -qi '^\[tn\.ckp\]$' "$f"; then
		say "the TN config in $f has a [tn.Ckp] table already: set flush-interval there"
		exit 1
	fi
	printf '# day1: flush interval\n[tn.Ckp]\nflush-interval = "%s"\n# day1: end of flush interval\n' "$MO_FLUSH" >>"$f"
}

wait_ready() {
	local deadline=$((SECONDS + MO_WAIT))
	while ((SECONDS < deadline)); do
		if ! running; then
			say "server exited during start; last lines of $LOG:"
			tail -30 "$LOG" >&2 || true
			exit 1
		fi
		if ready; then
			say "ready on 127.0.0.1:$MO_PORT (pid $(cat "$PIDFILE"))"
			return
		fi
		sleep 1
	done
	say "not ready after ${MO_WAIT}s; last lines of $LOG:"
	tail -30 "$LOG" >&2 || true
	exit 1
}

stop() {
	if ! running; then
		say "not running"
		rm -f "$PIDFILE"
		return
	fi
	local pid
	pid=$(cat "$PIDFILE")
	kill -TERM "$pid"
	for _ in $(seq 1 30); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	if kill -0 "$pid" 2>/dev/null; then
		say "still running after 30s; sending SIGKILL"
		kill -KILL "$pid" || true
	fi
	rm -f "$PIDFILE"
	say "stopped"
}

kill_now() {
	if ! running; then
		say "not running"
		rm -f "$PIDFILE"
		return 1
	fi
	local pid
	pid=$(cat "$PIDFILE")
	kill -KILL "$pid"
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	rm -f "$PIDFILE"
	say "killed pid $pid"
}

status() {
	if running; then
		say "running: pid $(cat "$PIDFILE"), log $LOG, DSN $DSN"
	else
		say "not running (cached binary: $([[ -x $BIN ]] && echo "$BIN" || echo none))"
		return 1
	fi
}

case ${1:-} in
start) start ;;
stop) stop ;;
kill) kill_now ;;
status) status ;;
build) build ;;
dsn) echo "$DSN" ;;
*)
	echo "usage: $0 start|stop|kill|status|build|dsn" >&2
	exit 2
	;;
esac
