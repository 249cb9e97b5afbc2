#!/usr/bin/env bash
# DONTCACHE against EVICT under heavy sequential writes: WRITERS threads, each writing a file of its own (or a region
# of its own in one file, -l regions) from start to end through StorageFile with REQUEST-sized requests, TOTAL bytes in
# all (io.pagewise.jmh.HeavyWrites, compiled here against the built jar). Per run: every request's latency (p50, p99,
# max), the write phase's MB/s, the MB/s until all is durable (the writes, then flush and close), the most the files
# had cached while written (sampled every 100 ms) and what they have cached after close, by the library's residency
# (cachestat) and by vmtouch. Variants, each its own JVM:
#   evict          CacheMode.EVICT (writes of 256 KiB or more in whole pages go by O_DIRECT)
#   evict-buffered EVICT with every write buffered and written back by window (-Dpagewise.evict.direct-writes=false)
#   dontcache      CacheMode.DONTCACHE as the library does it (writes as in EVICT, reads of whole windows uncached)
#   dontcache-rwf  DONTCACHE with RWF_DONTCACHE on writes of whole 2 MiB windows, the rest as in EVICT
#                  (-Dpagewise.dontcache.writes=windows, the library's rule before writes went EVICT's way)
#   dontcache-all  DONTCACHE with RWF_DONTCACHE on every write (-Dpagewise.dontcache.writes=all)
# Each round runs every variant once per request size and writer count, their order rotated every round, so that
# load from other processes falls on all alike; the summary gives the median per case over the rounds. The files are
# deleted and their file system synced before every run.
#
# Usage: jmh/dontcache-writes.sh [-s TOTAL (default 4G)] [-r ROUNDS (3)] [-w WRITERS (1,4,16)] [-b SIZES (256K,2M)]
#                                [-v VARIANTS (evict,dontcache-rwf,dontcache-all)] [-l files|regions (files)]
#                                [-d DIR (/var/tmp)] [-o OUT (jmh/results-dontcache-writes)]
#        jmh/dontcache-writes.sh -S RESULTS.csv      prints the summary of a results file again
# Writes OUT/results.csv (one row per run) and OUT/summary.txt. Needs the pagewise jar (mvn -q package -DskipTests),
# javac, vmtouch, python3, Linux >= 6.14 and a file system that takes RWF_DONTCACHE (ext4 >= 6.17, XFS >= 6.15) for
# DONTCACHE to be itself (the in_effect column says when it fell back to EVICT). $JAVA is the JVM (default java).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
total=4G rounds=3 writers=1,4,16 sizes=256K,2M variants=evict,dontcache-rwf,dontcache-all layout=files dir=/var/tmp
out="$root/jmh/results-dontcache-writes" summarize=
parse_options s=total r=rounds w=writers b=sizes v=variants l=layout d=dir o=out S=summarize -- "$@"

summary() { # RESULTS.csv: medians per request size, writer count and variant
    python3 - "$1" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cases = {}
for r in rows:
    cases.setdefault((int(r["request"]), int(r["writers"]), r["variant"]), []).append(r)
print(f"{sys.argv[1]}: medians over rounds (p50/p99/max: per-request latency; MB/s: write phase, and until durable;"
      " paired: the median over rounds of the variant's figure / evict's in the same round)")
print("| request | writers | variant | in effect | rounds | p50 ms | p99 ms | max ms | write MB/s | durable MB/s "
      "| p99 / evict, paired | durable MB/s / evict, paired "
      "| peak cached MiB | cached after (library) | cached after (vmtouch) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
med = lambda rs, k: statistics.median(float(r[k]) for r in rs)
def paired(rs, ref, k):
    by_round = {r["round"]: float(r[k]) for r in ref}
    ratios = [float(r[k]) / by_round[r["round"]] for r in rs if by_round.get(r["round"])]
    return f"{statistics.median(ratios):.2f}" if ratios else "—"
for (request, writers, variant), rs in sorted(cases.items(), key=lambda c: (c[0][0], c[0][1])):
    size = f"{request >> 20} MiB" if request >= 1 << 20 else f"{request >> 10} KiB"
    ref = cases.get((request, writers, "evict"), [])
    print(f"| {size} | {writers} | {variant} | {'/'.join(sorted({r['in_effect'] for r in rs}))} | {len(rs)} "
          f"| {med(rs, 'p50_ms'):.2f} | {med(rs, 'p99_ms'):.1f} | {med(rs, 'max_ms'):.0f} "
          f"| {med(rs, 'write_MBps'):.0f} | {med(rs, 'durable_MBps'):.0f} "
          f"| {paired(rs, ref, 'p99_ms')} | {paired(rs, ref, 'durable_MBps')} | {med(rs, 'peak_cached_MiB'):.0f} "
          f"| {max(float(r['cached_after_pct']) for r in rs):.2f} % (max) "
          f"| {max(float(r['vmtouch_pct']) for r in rs):.2f} % (max) |")
PY
}
if [ -n "$summarize" ]; then
    summary "$summarize"
    exit 0
fi
case $layout in files|regions) ;; *) usage_error ;; esac
require_tools javac:openjdk-17-jdk-headless vmtouch:vmtouch python3:python3 numfmt:coreutils
jar=$(find_jar)
java=${JAVA:-java}
bytes=$(numfmt --from=iec "$total")
free=$(df --output=avail -B1 "$dir" | tail -1)
if [ "$free" -lt $((bytes + (2 << 30))) ]; then
    echo "dontcache-writes: $dir has $(numfmt --to=iec "$free") free, the run needs $total and 2G to spare" >&2
    exit 1
fi
work=$(mktemp -d "$dir/pagewise-dontcache-writes.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/classes" "$work/files" "$out"
javac -d "$work/classes" -cp "$jar" "$root/jmh/src/main/java/io/pagewise/jmh/HeavyWrites.java" \
    "$root/jmh/src/main/java/io/pagewise/jmh/Percentiles.java"
csv="$out/results.csv"
IFS=, read -r -a variant_list <<< "$variants"
IFS=, read -r -a writer_list <<< "$writers"
IFS=, read -r -a size_list <<< "$sizes"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $(nproc) cores, $("$java" -version 2>&1 | head -1)," \
    "$total in all per run, $layout in $dir ($(df --output=fstype "$dir" | tail -1)), rounds $rounds" \
    | tee "$out/header.txt"
echo "round,variant,writers,request,load1,in_effect,p50_ms,p99_ms,max_ms,write_MBps,durable_MBps,peak_cached_MiB,cached_after_pct,vmtouch_pct" > "$csv"
run() { # round variant writers request
    local props=() mode line vm
    case $2 in
        evict) mode=EVICT ;;
        dontcache) mode=DONTCACHE ;;
        dontcache-all) mode=DONTCACHE props=(-Dpagewise.dontcache.writes=all) ;;
        dontcache-rwf) mode=DONTCACHE props=(-Dpagewise.dontcache.writes=windows) ;;
        evict-buffered) mode=EVICT props=(-Dpagewise.evict.direct-writes=false) ;;
        *) echo "dontcache-writes: unknown variant $2" >&2; exit 2 ;;
    esac
    rm -f "$work/files/"*
    sync -f "$work/files"
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    line=$("$java" -XX:+IgnoreUnrecognizedVMOptions --enable-native-access=ALL-UNNAMED "${props[@]}" \
        -cp "$work/classes:$jar" io.pagewise.jmh.HeavyWrites "$work/files" "$mode" "$3" \
        "$(numfmt --from=iec "$4")" "$bytes" "$layout" | grep '^RESULT ')
    vm=$(vmtouch "$work/files" | awk '/Resident Pages/ { gsub("%", "", $NF); print $NF }')
    echo "round=$1 variant=$2 load1=$load $line vmtouch_pct=$vm" >&2
    python3 - "$1" "$2" "$load" "$vm" "$line" >> "$csv" <<'PY'
import sys
round_, variant, load, vm, line = sys.argv[1:]
f = dict(kv.split("=", 1) for kv in line.split()[1:])
print(",".join([round_, variant, f["writers"], f["request"], load, f["in_effect"], f["p50_ms"], f["p99_ms"],
                f["max_ms"], f["write_MBps"], f["durable_MBps"], f["peak_cached_MiB"], f["cached_after_pct"], vm]))
PY
}
for round in $(seq 1 "$rounds"); do
    for size in "${size_list[@]}"; do
        for w in "${writer_list[@]}"; do
            n=${#variant_list[@]}
            for i in $(seq 0 $((n - 1))); do
                run "$round" "${variant_list[$(( (i + round) % n ))]}" "$w" "$size"
            done
        done
    done
done
rm -f "$work/files/"*
summary "$csv" | tee "$out/summary.txt"
