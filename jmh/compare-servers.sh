#!/usr/bin/env bash
# Side-by-side NBD server benchmark: pagewise (each mode), nbdkit file and qemu-nbd on the same file, over a
# Unix socket, with nbdcopy as the client. Interleaved rounds, order rotated each round; the file is evicted
# before every read run and every write run ends with a flush. Prints median/min seconds, residency left
# and the paired ratio to a reference row (median over rounds of row/reference from the same round).
#
# The disk's own limit in the same run: configs fio-direct and fio-buffered are fio alone on the same files,
# sequential 4 MiB requests, 16 in flight (libaio), O_DIRECT or through the page cache, writes ending with fsync as
# nbdcopy --flush ends them; no NBD. summarize.sh compares each clean mode with the faster of the two.
#
# Needs (Debian): libnbd-bin (nbdcopy), nbdkit, qemu-utils (qemu-nbd), vmtouch, fio (for fio-*); gnuplot-nox for the
# chart; for the nbdkit142 and qemu10 configs, the trixie root of ../shared/tools/newest-nbd-tools.sh.
# Installs nothing itself.
set -euo pipefail

usage() {
    cat <<USAGE
usage: jmh/compare-servers.sh [options]
  -s SIZE      file size for truncate/head, e.g. 4G (default 4G)
  -r ROUNDS    interleaved rounds (default 5)
  -d DIR       where the test files go (default /var/tmp; must not be tmpfs)
  -o OUT       output directory for results.csv, summary.txt, chart.png (default jmh/results)
  -t TESTS     read,write (default both)
  -c CONFIGS   comma-separated subset of: $ALL_CONFIGS
               (pagewise-MODE also takes @JAR and :THREADS, see jmh/servers.sh)
  -h           this help
USAGE
}

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/servers.sh
source "$root/jmh/servers.sh"
ALL_CONFIGS="pagewise-writeback,pagewise-writethrough,pagewise-unsafe,pagewise-evict,pagewise-dontcache,pagewise-direct,pagewise-directsync,nbdkit,nbdkit-none,nbdkit-none-random,qemu-writeback,qemu-none,nbdkit142,nbdkit142-none,qemu10-writeback,qemu10-none,qemu10-none-uring,fio-direct,fio-buffered"
size=4G rounds=5 dir=/var/tmp out="$root/jmh/results" tests=read,write configs=$ALL_CONFIGS
parse_options s=size r=rounds d=dir o=out t=tests c=configs -- "$@"

require_tools nbdcopy:libnbd-bin nbdkit:nbdkit qemu-nbd:qemu-utils vmtouch:vmtouch bc:bc
find_jar >/dev/null # else bin/pagewise would build it while start_server waits
mkdir -p "$out"
work=$(mktemp -d "$dir/pagewise-bench.XXXXXX")
sock="$work/nbd.sock"
log="$work/server.log"
trap cleanup EXIT INT TERM

source_file="$work/source.raw"
echo "creating $size of random data in $source_file ..." >&2
head -c "$size" /dev/urandom > "$source_file"
sync "$source_file" # dirty pages would stay cached through the eviction
bytes=$(stat -c %s "$source_file")

uri="nbd+unix:///?socket=$sock"

# fio_run fio-direct|fio-buffered read|write FILE: the whole file in sequential 4 MiB requests, 16 in flight.
fio_run() {
    local direct=0 sync=()
    [ "$1" = fio-direct ] && direct=1
    [ "$2" = write ] && sync=(--end_fsync=1)
    fio --name=disk --filename="$3" --rw="$2" --bs=4M --size="$bytes" --direct=$direct --ioengine=libaio \
        --iodepth=16 "${sync[@]}" --output=/dev/null
}
csv="$out/results.csv"
echo "round,test,config,seconds,resident_percent" > "$csv"
IFS=, read -r -a config_list <<< "$configs"
IFS=, read -r -a test_list <<< "$tests"
n=${#config_list[@]}
for round in $(seq 1 "$rounds"); do
    for test in "${test_list[@]}"; do
        for i in $(seq 0 $((n - 1))); do
            config=${config_list[$(( (i + round) % n ))]}
            if [ "$test" = read ]; then
                target=$source_file
                vmtouch -q -e "$target"
                if [[ $config == fio-* ]]; then
                    seconds=$(timed fio_run "$config" read "$target")
                else
                    start_server "$config" "$target"
                    seconds=$(timed nbdcopy "$uri" null:)
                fi
            else
                vmtouch -q -t "$source_file"
                target="$work/dest.raw"
                rm -f "$target"
                truncate -s "$bytes" "$target"
                if [[ $config == fio-* ]]; then
                    seconds=$(timed fio_run "$config" write "$target")
                else
                    start_server "$config" "$target"
                    seconds=$(timed nbdcopy --flush "$source_file" "$uri")
                fi
            fi
            [[ $config == fio-* ]] || stop_server
            resident=$(resident_percent "$target")
            printf '%s,%s,%s,%.3f,%s\n' "$round" "$test" "$config" "$seconds" "$resident" | tee -a "$csv" >&2
            [ "$test" = write ] && rm -f "$target"
        done
    done
done

"$root/jmh/summarize.sh" "$csv" | tee "$out/summary.txt"
if command -v gnuplot >/dev/null; then
    "$root/jmh/chart.sh" "$csv" "$out/chart.png"
else
    echo "(gnuplot not installed: apt-get install -y gnuplot-nox for the chart)" >&2
fi
