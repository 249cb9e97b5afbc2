#!/usr/bin/env bash
# pagewise checksum against blksum, the reference tool, on the same images: a dense one (SIZE bytes of random data,
# default 4 GiB) and a sparse one of the same size (25 % data, in 16 MiB runs spread over it, the rest holes).
# Each round evicts the image from the page cache before each tool (fadvise DONTNEED, bin/pagewise evict), runs
# both, the order alternating from round to round, and checks that they print the same checksum.
# Prints one line per round: both times (wall), and the ratio pagewise / blksum; then the median of the ratios.
# Usage: jmh/checksum.sh [-s SIZE] [-r ROUNDS (default 5)] [-w DIR (default /var/tmp)] [-B BLKSUM]
# Needs: blksum (BLKSUM, else $PAGEWISE_BLKSUM, else /tmp/blkhash-build/build/bin/blksum: build it with
# ../shared/tools/blkhash/build.sh), qemu-nbd (blksum reads files through it), bc.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
size=$((4 << 30)) rounds=5 dir=/var/tmp blksum=${PAGEWISE_BLKSUM:-/tmp/blkhash-build/build/bin/blksum}
parse_options s=size r=rounds w=dir B=blksum -- "$@"
require_tools qemu-nbd:qemu-utils bc:bc
size=$(numfmt --from=iec "$size") # 4G -> 4294967296
[ -x "$blksum" ] || { echo "jmh/checksum.sh: no blksum at $blksum (bash ../shared/tools/blkhash/build.sh)" >&2; exit 1; }
pagewise="$root/bin/pagewise"
"$pagewise" --version >/dev/null # builds the jar first when it is stale, outside the timings
dense=$(mktemp "$dir/pagewise-checksum-dense.XXXXXX.raw")
sparse=$(mktemp "$dir/pagewise-checksum-sparse.XXXXXX.raw")
trap 'rm -f "$dense" "$sparse"' EXIT INT TERM
head -c "$size" /dev/urandom >"$dense"
truncate -s "$size" "$sparse"
for ((at = 0; at + (16 << 20) <= size; at += 64 << 20)); do
    dd if="$dense" of="$sparse" bs=16M count=1 skip=$((at >> 24)) seek=$((at >> 24)) conv=notrunc status=none
done

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), SIZE=$size bytes, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# blksum $blksum and pagewise checksum, both with their defaults: sha256, 64 KiB blocks, 4 threads"

# run_tool OUT TOOL...: evicts the image, runs TOOL, keeps its checksum in OUT; prints the seconds.
run_tool() {
    local out=$1 start end
    shift
    "$pagewise" evict "${@: -1}" >/dev/null
    start=$(date +%s.%N)
    "$@" >"$out"
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}

for image in "$dense" "$sparse"; do
    kind=$(basename "$image" | cut -d- -f3 | cut -d. -f1)
    ratios=()
    for round in $(seq "$rounds"); do
        if ((round % 2)); then
            theirs=$(run_tool /tmp/blksum.out "$blksum" "$image")
            ours=$(run_tool /tmp/pagewise.out "$pagewise" checksum "$image")
        else
            ours=$(run_tool /tmp/pagewise.out "$pagewise" checksum "$image")
            theirs=$(run_tool /tmp/blksum.out "$blksum" "$image")
        fi
        [ "$(cut -d' ' -f1 /tmp/blksum.out)" = "$(cut -d' ' -f1 /tmp/pagewise.out)" ] \
            || { echo "jmh/checksum.sh: the checksums differ: $(cat /tmp/blksum.out /tmp/pagewise.out)" >&2; exit 1; }
        ratio=$(echo "$ours / $theirs" | bc -l)
        ratios+=("$ratio")
        printf '%-6s round %d: blksum %6.2f s, pagewise %6.2f s, ratio %.2f\n' "$kind" "$round" "$theirs" "$ours" "$ratio"
    done
    printf '%-6s median ratio pagewise / blksum: %.2f\n' "$kind" \
        "$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
done
