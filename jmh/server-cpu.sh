#!/usr/bin/env bash
# Where a server's time goes: for each config, the wall time of one nbdcopy run and the user and system CPU
# seconds the server process spent during it (from /proc/PID/stat), in alternating rounds. Used to compare two
# builds of pagewise side by side: a config "pagewise-MODE@JAR" runs that jar instead of this checkout's.
#
# Needs (Debian): libnbd-bin (nbdcopy), nbdkit, qemu-utils (qemu-nbd), vmtouch. Installs nothing itself.
set -euo pipefail

usage() {
    cat <<USAGE
usage: jmh/server-cpu.sh [options]
  -s SIZE      file size, e.g. 2G (default 2G)
  -r ROUNDS    alternating rounds (default 5)
  -d DIR       where the test files go (default /var/tmp; must not be tmpfs)
  -t TESTS     read,write (default both)
  -c CONFIGS   comma-separated configs as in jmh/servers.sh: pagewise-MODE[@JAR][:THREADS], nbdkit,
               nbdkit-none, nbdkit-none-random, qemu-writeback, qemu-none (default pagewise-evict,nbdkit-none)
  -h           this help
Prints one line per run: round test config wall_s server_user_s server_sys_s resident_percent
USAGE
}

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/servers.sh
source "$root/jmh/servers.sh"
size=2G rounds=5 dir=/var/tmp tests=read,write configs=pagewise-evict,nbdkit-none
parse_options s=size r=rounds d=dir t=tests c=configs -- "$@"
require_tools nbdcopy:libnbd-bin nbdkit:nbdkit qemu-nbd:qemu-utils vmtouch:vmtouch bc:bc

work=$(mktemp -d "$dir/pagewise-cpu.XXXXXX")
sock="$work/nbd.sock"
log="$work/server.log"
trap cleanup EXIT INT TERM
src="$work/source.raw"
head -c "$size" /dev/urandom > "$src"
sync "$src" # dirty pages would stay cached through the eviction
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $(stat -c %s "$src") bytes in $dir"

# user and system seconds of a process so far
cpu_of() {
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f %.2f\n", $14 / hz, $15 / hz }' "/proc/$1/stat"
}

run_one() {
    local round=$1 test=$2 config=$3 target
    if [ "$test" = read ]; then
        target=$src
        vmtouch -q -e "$target"
    else
        vmtouch -q -t "$src"
        target="$work/dest.raw"
        rm -f "$target"
        truncate -s "$(stat -c %s "$src")" "$target"
    fi
    start_server "$config" "$target"
    sleep 0.2
    local before after start end
    before=$(cpu_of "$server_pid")
    start=$(date +%s.%N)
    if [ "$test" = read ]; then
        nbdcopy "nbd+unix:///?socket=$sock" null:
    else
        nbdcopy --flush "$src" "nbd+unix:///?socket=$sock"
    fi
    end=$(date +%s.%N)
    after=$(cpu_of "$server_pid")
    stop_server
    local resident
    resident=$(resident_percent "$target")
    read -r u0 s0 <<< "$before"
    read -r u1 s1 <<< "$after"
    printf '%s %s %s %.3f %.2f %.2f %s\n' "$round" "$test" "$config" "$(echo "$end - $start" | bc -l)" \
        "$(echo "$u1 - $u0" | bc -l)" "$(echo "$s1 - $s0" | bc -l)" "$resident"
}

IFS=, read -r -a config_list <<< "$configs"
IFS=, read -r -a test_list <<< "$tests"
echo "round test config wall_s server_user_s server_sys_s resident_percent"
for round in $(seq 1 "$rounds"); do
    for test in "${test_list[@]}"; do
        for config in "${config_list[@]}"; do run_one "$round" "$test" "$config"; done
    done
done | tee "$work/runs.txt"

echo
echo "medians: test config wall_s server_user_s server_sys_s"
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for test in "${test_list[@]}"; do
    for config in "${config_list[@]}"; do
        rows=$(awk -v t="$test" -v c="$config" '$2 == t && $3 == c' "$work/runs.txt")
        printf '%s %s %.3f %.2f %.2f\n' "$test" "$config" "$(awk '{ print $4 }' <<< "$rows" | median)" \
            "$(awk '{ print $5 }' <<< "$rows" | median)" "$(awk '{ print $6 }' <<< "$rows" | median)"
    done
done
