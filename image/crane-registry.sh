# shellcheck shell=bash
# Sourced by the scripts that assemble images with crane (image/build.sh, test/images/build.sh): crane's mutate and
# index steps work on a registry, so they get one on loopback that holds nothing after the build.
#
#   crane_work_dir <mktemp template>          sets work: a new directory, removed (and the registry stopped) on exit
#   start_crane_registry <crane> <log file>   sets crane_registry_pid and crane_registry_port
crane_work_dir() {
  work=$(mktemp -d "$1")
  crane_registry_pid=
  trap crane_build_cleanup EXIT
}

crane_build_cleanup() {
  [[ -z $crane_registry_pid ]] || kill "$crane_registry_pid" 2>/dev/null || true
  rm -rf "$work"
}

start_crane_registry() {
  local crane=$1 log=$2
  "$crane" registry serve --address 127.0.0.1:0 2>"$log" &
  crane_registry_pid=$!
  crane_registry_port=
  for _ in $(seq 100); do
    crane_registry_port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$log")
    [[ -n $crane_registry_port ]] && return 0
    sleep 0.1
  done
  echo "crane registry did not start: $(cat "$log")" >&2
  return 1
}
