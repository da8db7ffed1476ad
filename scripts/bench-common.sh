# scripts/bench-common.sh — sourced by scripts/bench-memory and
# scripts/bench-embedding: installing the peers, a temporary directory
# cleaned on exit, starting tiercache / redis-server / memcached on Unix
# sockets (pinned with taskset by BENCH_SERVER_CPUS), stopping them, peak
# RSS, and medians with ranges; record (scripts/bench-record.sh) writes each
# figure to $BENCH_JSON when set. The caller sets `set -eu` and cds to the
# repository root first.

. scripts/bench-record.sh
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"
srv_pin=() cli_pin=()
[ -n "${BENCH_SERVER_CPUS:-}" ] && srv_pin=(taskset -c "$BENCH_SERVER_CPUS")
[ -n "${BENCH_CLIENT_CPUS:-}" ] && cli_pin=(taskset -c "$BENCH_CLIENT_CPUS")

# need_pkgs NAME:COMMAND ...: apt-get install each Debian package NAME whose
# COMMAND is missing (as root; otherwise say so and exit).
need_pkgs() {
  local need=() p
  for p in "$@"; do
    command -v "${p#*:}" >/dev/null 2>&1 || need+=("${p%%:*}")
  done
  [ "${#need[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "$(basename "$0"): need ${need[*]} (run as root to install them)" >&2
    exit 1
  fi
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

tmp=$(mktemp -d /tmp/tc-bench-XXXXXX)
bench_pids=()
cleanup() {
  local p
  for p in "${bench_pids[@]}"; do
    kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# build_clients CMD...: builds tiercache and bench/cmd/CMD into $tmp.
build_clients() {
  local c
  go build -o "$tmp/tiercache" ./cmd/tiercache
  for c in "$@"; do
    go -C bench build -o "$tmp/$c" "./cmd/$c"
  done
}

# to_bytes SIZE: "100MiB", "1GiB", "512k" or a number of bytes, in bytes.
to_bytes() {
  awk -v s="$1" 'BEGIN {
    n = s + 0; u = tolower(substr(s, length(n "") + 1));
    sub(/i?b$/, "", u); m = 1;
    if (u == "k") m = 1024; else if (u == "m") m = 1024^2; else if (u == "g") m = 1024^3; else if (u == "t") m = 1024^4;
    else if (u != "") { print "bad size " s > "/dev/stderr"; exit 1 }
    printf "%d\n", n * m }'
}

# resp_loaded SOCK: the server answers with its dataset loaded (INFO
# persistence loading:0): tiercache answers PING while its cache opens.
resp_loaded() {
  redis-cli -s "$1" INFO persistence 2>/dev/null | grep -q '^loading:0'
}

# wait_resp SOCK / wait_sock SOCK: until the server answers with its
# dataset loaded / the socket exists (memcached), for at most 10 s.
wait_resp() {
  local _
  for _ in $(seq 1 100); do
    resp_loaded "$1" && return 0
    sleep 0.1
  done
  echo "$(basename "$0"): $1 did not answer loading:0" >&2
  return 1
}
wait_sock() {
  local _
  for _ in $(seq 1 100); do
    [ -S "$1" ] && return 0
    sleep 0.1
  done
  echo "$(basename "$0"): no socket $1" >&2
  return 1
}

# Each start_* runs one server in the background, records its pid in
# $srv_pid (and bench_pids, for cleanup) and waits until it serves.
#
# start_tiercache NAME DRAM_BYTES: hot.bytes = DRAM/4, warm.bytes = the
# rest, the emulated cold tier (its default capacity) under $tmp/NAME.data,
# socket $tmp/NAME.sock. TC_FLAGS adds flags; TC_BIN runs another binary.
start_tiercache() {
  local hot=$(($2 / 4))
  rm -rf "$tmp/$1.data"
  "${srv_pin[@]}" "${TC_BIN:-$tmp/tiercache}" serve -socket "$tmp/$1.sock" -data "$tmp/$1.data" -metrics 127.0.0.1:0 -log-level warn \
    -hot-bytes "$hot" -warm-bytes "$(($2 - hot))" ${TC_FLAGS:-} >"$tmp/$1.out" 2>"$tmp/$1.log" &
  srv_pid=$!
  bench_pids+=("$srv_pid")
  wait_resp "$tmp/$1.sock" || { tail -n 5 "$tmp/$1.log" "$tmp/$1.out" >&2; return 1; }
}

# start_redis NAME [MAXMEMORY_BYTES]: no persistence; with MAXMEMORY,
# allkeys-lru eviction at that many bytes, else no limit.
start_redis() {
  local mm=()
  [ -n "${2:-}" ] && mm=(--maxmemory "$2" --maxmemory-policy allkeys-lru)
  "${srv_pin[@]}" redis-server --port 0 --unixsocket "$tmp/$1.sock" --unixsocketperm 700 --save "" --appendonly no \
    "${mm[@]}" --daemonize no --logfile "$tmp/$1.log" &
  srv_pid=$!
  bench_pids+=("$srv_pid")
  wait_resp "$tmp/$1.sock"
}

# start_memcached NAME MIB [ARGS...]: -m MIB of item memory, 1 MiB items
# at most, and ARGS (e.g. -o ext_path=FILE:SIZE for extstore).
start_memcached() {
  local n=$1 m=$2
  shift 2
  rm -f "$tmp/$n.sock"
  "${srv_pin[@]}" memcached -u root -s "$tmp/$n.sock" -a 0700 -m "$m" -I 1m "$@" >"$tmp/$n.log" 2>&1 &
  srv_pid=$!
  bench_pids+=("$srv_pid")
  wait_sock "$tmp/$n.sock"
}

# stop_server PID
stop_server() {
  kill -TERM "$1" 2>/dev/null && wait "$1" 2>/dev/null || true
  local p keep=()
  for p in "${bench_pids[@]}"; do
    [ "$p" != "$1" ] && keep+=("$p")
  done
  bench_pids=("${keep[@]}")
}

# mc_stats SOCK: memcached's "stats" on its Unix socket, "NAME VALUE" lines.
mc_stats() {
  python3 - "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"stats\r\n")
buf = b""
while not buf.endswith(b"END\r\n"):
    d = s.recv(65536)
    if not d:
        break
    buf += d
for line in buf.decode().split("\r\n"):
    if line.startswith("STAT "):
        print(line[5:])
PY
}

# hwm_mib PID: peak resident set (VmHWM) in MiB.
hwm_mib() { awk '/^VmHWM:/ { printf "%.1f\n", $2 / 1024 }' "/proc/$1/status"; }

# result_field LINE NAME: the value of NAME=... in a RESULT line.
result_field() { printf '%s\n' "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k { print $2 }'; }

# stat N...: the median of the numbers, and "(lo-hi)" when there are
# several, formatted with printf format $fmt (default %.2f).
stat() {
  printf '%s\n' "$@" | sort -g | awk -v f="${fmt:-%.2f}" '{ a[NR] = $1 }
    END { if (NR == 0) { print "-"; exit }
          m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2;
          s = sprintf(f, m); if (NR > 1) s = s sprintf(" (" f "-" f ")", a[1], a[NR]); print s }'
}

# bound_mib DRAM_BYTES KEYS: the issue's RSS bound for tiercache,
# 1.10 × (hot + warm) + BENCH_INDEX_COST (bytes per key, default 272:
# tier.DirEntryBytes 200 + tier.ColdIndexBytes 72, the cold tier being on) × keys
# + 32 MiB, in MiB.
index_cost=${BENCH_INDEX_COST:-272}
bound_mib() { awk -v d="$1" -v k="$2" -v c="$index_cost" 'BEGIN { printf "%.1f\n", (1.10 * d + c * k) / 1048576 + 32 }'; }

# tc_version: the commit of the tiercache measured: TC_BIN's own (the
# build's vcs.revision, "-dirty" when built from a modified tree, "TC_BIN"
# beside it), else the working tree's.
tc_version() {
  if [ -n "${TC_BIN:-}" ]; then
    go version -m "$TC_BIN" 2>/dev/null | awk -v bin="$TC_BIN" '
      $1 == "build" && $2 ~ /^vcs.revision=/ { r = substr($2, 14, 7) }
      $1 == "build" && $2 == "vcs.modified=true" { d = "-dirty" }
      END { print (r == "" ? "?" : r) d " (TC_BIN " bin ")" }'
  else
    git describe --always --dirty 2>/dev/null || echo '?'
  fi
}

# print_machine: versions and the machine, for the header.
print_machine() {
  echo "machine:   $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -r)"
  echo "servers:   tiercache $(tc_version); $(redis-server --version | cut -d' ' -f1-3)${1:+; $1}"
  [ -n "${BENCH_SERVER_CPUS:-}${BENCH_CLIENT_CPUS:-}" ] &&
    echo "pinned:    servers on CPUs ${BENCH_SERVER_CPUS:-any}, clients on CPUs ${BENCH_CLIENT_CPUS:-any}"
  [ -n "${GOMEMLIMIT:-}" ] && echo "GOMEMLIMIT=$GOMEMLIMIT (tiercache inherits it)"
  [ -n "${TC_FLAGS:-}" ] && echo "TC_FLAGS:  $TC_FLAGS"
  return 0
}
