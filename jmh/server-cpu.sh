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
  -c CONFIGS   comma-separated: pagewise-MODE[@JAR][:THREADS], nbdkit, nbdkit-none, qemu-none\n               (default pagewise-evict,nbdkit-none)
  -h           this help
Prints one line per run: round test config wall_s server_user_s server_sys_s resident_percent
USAGE
}

root=$(cd "$(dirname "$0")/.." && pwd)
size=2G rounds=5 dir=/var/tmp tests=read,write configs=pagewise-evict,nbdkit-none
while getopts "s:r:d:t:c:h" opt; do
    case $opt in
        s) size=$OPTARG ;; r) rounds=$OPTARG ;; d) dir=$OPTARG ;; t) tests=$OPTARG ;; c) configs=$OPTARG ;;
        h) usage; exit 0 ;; *) usage >&2; exit 2 ;;
    esac
done
for tool in nbdcopy:libnbd-bin nbdkit:nbdkit qemu-nbd:qemu-utils vmtouch:vmtouch bc:bc; do
    command -v "${tool%%:*}" >/dev/null || { echo "server-cpu: needs ${tool%%:*}: apt-get install -y ${tool#*:}" >&2; exit 1; }
done
own_jar=$(ls "$root"/target/pagewise-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -1 || true)

work=$(mktemp -d "$dir/pagewise-cpu.XXXXXX")
sock="$work/nbd.sock"
pid=
cleanup() {
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
src="$work/source.raw"
head -c "$size" /dev/urandom > "$src"

# user and system seconds of a process so far
cpu_of() {
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f %.2f\n", $14 / hz, $15 / hz }' "/proc/$1/stat"
}

run_one() {
    local round=$1 test=$2 config=$3 target jar mode threads
    if [ "$test" = read ]; then
        target=$src
        vmtouch -q -e "$target"
    else
        vmtouch -q -t "$src"
        target="$work/dest.raw"
        rm -f "$target"
        truncate -s "$(stat -c %s "$src")" "$target"
    fi
    rm -f "$sock"
    case $config in
        pagewise-*)
            mode=${config#pagewise-}
            jar=$own_jar threads=()
            case $mode in *:*) threads=("--threads=${mode##*:}"); mode=${mode%:*} ;; esac
            case $mode in *@*) jar=${mode#*@}; mode=${mode%%@*} ;; esac
            [ -n "$jar" ] || { echo "server-cpu: no jar; build it with: mvn -q package -DskipTests" >&2; exit 1; }
            # the same JVM options as bin/pagewise
            java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar "$jar" serve --socket="$sock" --cache="$mode" "${threads[@]}" "$target" \
                >"$work/server.log" 2>&1 & ;;
        nbdkit) nbdkit -f -U "$sock" file "$target" >"$work/server.log" 2>&1 & ;;
        nbdkit-none) nbdkit -f -U "$sock" file "$target" cache=none >"$work/server.log" 2>&1 & ;;
        qemu-none) qemu-nbd -f raw --cache=none -t -e 8 -k "$sock" "$target" >"$work/server.log" 2>&1 & ;;
        *) echo "server-cpu: unknown config $config" >&2; exit 2 ;;
    esac
    pid=$!
    for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
    [ -S "$sock" ] || { echo "server $config did not start:" >&2; cat "$work/server.log" >&2; exit 1; }
    sleep 0.2
    local before after start end
    before=$(cpu_of "$pid")
    start=$(date +%s.%N)
    if [ "$test" = read ]; then
        nbdcopy "nbd+unix:///?socket=$sock" null:
    else
        nbdcopy --flush "$src" "nbd+unix:///?socket=$sock"
    fi
    end=$(date +%s.%N)
    after=$(cpu_of "$pid")
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
    local resident
    resident=$(vmtouch "$target" | awk '/Resident Pages/ { gsub("%", "", $NF); print $NF }')
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
