# scripts/bench-record.sh — sourced by the bench scripts: when BENCH_JSON
# names a file, each figure a script measures is also appended there as one
# JSON line, which bench/cmd/report (run by scripts/bench) reads:
#   {"bench":"redis","case":"GET -P 16","round":2,"server":"tiercache","metric":"cpu_us","value":0.96}
# round 0 is a figure of the whole run (not of one round). Without
# BENCH_JSON nothing is written and the scripts print what they always did.

# record BENCH CASE ROUND SERVER METRIC VALUE: one figure; a VALUE that is
# not a number (a failed run's empty field) is left out.
record() {
  [ -n "${BENCH_JSON:-}" ] || return 0
  [[ $6 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]] || return 0
  printf '{"bench":"%s","case":"%s","round":%d,"server":"%s","metric":"%s","value":%s}\n' \
    "$(json_esc "$1")" "$(json_esc "$2")" "$3" "$(json_esc "$4")" "$(json_esc "$5")" "$6" >>"$BENCH_JSON"
}

# json_esc S: S with backslashes and double quotes escaped for a JSON string.
json_esc() {
  local s=${1//\\/\\\\}
  printf '%s' "${s//\"/\\\"}"
}
