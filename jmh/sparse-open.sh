#!/usr/bin/env bash
# Cost of a huge sparse image: copying it and serving it should cost what its data costs, not its virtual size.
# Creates a sparse file of SIZE (default 16 TiB minus 4 KiB, the largest file ext4 with 4 KiB blocks allows) holding
# DATA bytes (default 64 MiB) of random data in 4 islands (start, 1/3, 2/3, end), evicts it, then for ROUNDS rounds:
#   copy      bin/pagewise copy SRC DST, file to file, default options (EVICT both sides)
#   nbdcopy   nbdcopy SRC DST on the same file (skipped when nbdcopy is missing)
#   serve-M   bin/pagewise serve --cache=M --socket=... --run='nbdinfo --size $uri' SRC, for M in evict and dontcache:
#             opening the export, answering one client and closing
# and prints one line per run: seconds (wall) and max RSS (KiB, /usr/bin/time -v). The destination is removed
# and the source evicted (fadvise DONTNEED through vmtouch -e) before each run; with -c its 4 islands of data are
# read into the page cache instead, so that the snapshot EVICT takes at open has someone else's cache to find. Then one more copy and one serve
# under strace -f print how many mincore, mmap, munmap, cachestat and lseek calls they made.
# PAGEWISE_JAR measures that jar (say, a build of another commit) and PAGEWISE_JAVA_OPTS=-Dpagewise.cachestat=false
# the path kernels before 6.5 take, as bin/pagewise honours both.
# Usage: jmh/sparse-open.sh [-s SIZE] [-d DATA] [-r ROUNDS (default 3)] [-w DIR (default /var/tmp)] [-N (no nbdcopy)] [-c]
# Needs: /usr/bin/time, vmtouch, strace, nbdinfo; nbdcopy for its rows.
set -euo pipefail
usage() { echo "usage: jmh/sparse-open.sh [-s SIZE] [-d DATA] [-r ROUNDS] [-w DIR] [-N] [-c]"; }
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
size=$((16 * 2 ** 40 - 4096)) data=64M rounds=3 dir=/var/tmp nbdcopy=nbdcopy cached=
while getopts "s:d:r:w:Nch" opt; do
    case $opt in
        s) size=$OPTARG ;; d) data=$OPTARG ;; r) rounds=$OPTARG ;; w) dir=$OPTARG ;; N) nbdcopy= ;; c) cached=1 ;;
        h) usage; exit 0 ;; *) usage >&2; exit 2 ;;
    esac
done
require_tools /usr/bin/time:time vmtouch:vmtouch strace:strace nbdinfo:libnbd-bin
pagewise="$root/bin/pagewise"
"$pagewise" --version >/dev/null # builds the jar first when it is stale, outside the timings
work=$(mktemp -d "$dir/pagewise-sparse-open.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

src="$work/sparse.raw" dst="$work/copy.raw"
truncate -s "$size" "$src"
bytes=$(stat -c %s "$src")
island=$(( $(numfmt --from=iec "$data") / 4 ))
islands() { for i in 0 1 2 3; do echo $(( (bytes - island) / 3 * i / 4096 * 4096 )); done; }
for at in $(islands); do
    head -c "$island" /dev/urandom | dd of="$src" bs=1M seek="$at" oflag=seek_bytes conv=notrunc status=none
done
sync
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $(df -T "$work" | awk 'NR == 2 { print $2 }') in $dir," \
    "SIZE=$bytes bytes ($(numfmt --to=iec "$bytes")), data $(( $(du -k "$src" | cut -f1) / 1024 )) MiB allocated," \
    "$(nproc) CPUs, source data $([ -n "$cached" ] && echo cached || echo evicted) before each run, jar ${PAGEWISE_JAR:-of this checkout}, JVM options ${PAGEWISE_JAVA_OPTS-as bin/pagewise sets them}"

# prepare: no destination, and the source evicted, or with -c its data cached
prepare() {
    rm -f "$dst"
    vmtouch -q -e "$src"
    if [ -n "$cached" ]; then
        for at in $(islands); do
            dd if="$src" of=/dev/null bs=1M skip="$at" count="$island" iflag=skip_bytes,count_bytes status=none
        done
    fi
}

# measure NAME COMMAND...: one row "NAME seconds maxrss_kib"
measure() {
    local name=$1; shift
    prepare
    /usr/bin/time -v -o "$work/time" "$@" >"$work/out" 2>&1 || { cat "$work/out" "$work/time" >&2; exit 1; }
    awk -v name="$name" -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = t[n] + 60 * t[n - 1] + 3600 * (n > 2 ? t[1] : 0) }
        /Maximum resident set size/ { rss = $2 } END { printf "%-16s %8.2f s %8d KiB max RSS\n", name, s, rss }' "$work/time"
}

serve=("$pagewise" serve --socket="$work/sock" --run='nbdinfo --size "$uri"')

echo "run              seconds      max RSS"
for round in $(seq "$rounds"); do
    measure copy "$pagewise" copy "$src" "$dst"
    [ "$(stat -c %s "$dst")" = "$bytes" ] || { echo "sparse-open: the copy has the wrong size" >&2; exit 1; }
    for at in $(islands); do
        cmp -i "$at" -n "$island" "$src" "$dst" || { echo "sparse-open: the copy differs at $at" >&2; exit 1; }
    done
    if [ -n "$nbdcopy" ] && command -v nbdcopy >/dev/null; then measure nbdcopy nbdcopy "$src" "$dst"; fi
    measure serve-evict "${serve[@]}" --cache=evict "$src"
    measure serve-dontcache "${serve[@]}" --cache=dontcache "$src"
done

# syscalls NAME COMMAND...: how many of the calls that could scale with a file's size strace -f saw
syscalls() {
    local name=$1; shift
    prepare
    strace -f -o "$work/strace" "$@" >/dev/null 2>&1
    # strace 6.1 does not know cachestat (451): it prints it as syscall_0x1c3
    echo "$name: $(sed -E 's/syscall_0x1c3\(/cachestat(/' "$work/strace" | grep -oE '^[0-9]+ +(mincore|mmap|munmap|cachestat|lseek)\(' |
        awk '{ sub(/\(/, "", $2); n[$2]++ } END { for (c in n) printf "%s %d, ", c, n[c] }' | sed 's/, $//')"
}
echo "# system calls (strace -f; mmap and munmap include the JVM's own)"
syscalls copy "$pagewise" copy "$src" "$dst"
syscalls serve-evict "${serve[@]}" --cache=evict "$src"
