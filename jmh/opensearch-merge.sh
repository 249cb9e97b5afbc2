#!/usr/bin/env bash
# Search on a hot OpenSearch index while another index on the same node force-merges and a shard moves in, in a
# memory cgroup, through each of the stores pagewise, hybridfs (OpenSearch's default) and mmapfs. Each run is one
# failsafe run of opensearch/src/test/java/io/pagewise/opensearch/PagewiseMergeBench.java: a fresh internal cluster
# of two data nodes in one JVM, which joins a fresh memory cgroup v1 under /sys/fs/cgroup/memory/ (limit -m MiB)
# before it starts (opensearch/src/test/unprivileged/bin/java, PAGEWISE_TEST_CGROUP), removed when the run ends.
# All three indices are of the store under test, one shard each, no replica:
#   - hot: on node A, read wholly, then searched by one thread (term queries, 5 documents fetched each) for 10 s
#     ("before") and on through the merge and the move ("during");
#   - merge: on node A, flushed into many segments, evicted, then force-merged to one segment;
#   - move: on node B, evicted, then moved onto node A (allocation require) as the merge starts.
# Documents: 100 words of a 2,000-word vocabulary and a stored blob of random characters (so that a few documents
# make megabytes). The stores alternate within a round, in an order rotated per round.
#
# Usage: jmh/opensearch-merge.sh [-r ROUNDS (3)] [-m LIMIT_MIB (1100; 0: no limit)] [-x TEST_JVM_HEAP (512m)] [-d STORES (pagewise,hybridfs,mmapfs)]
#                                [-s HOT_DOCS,MERGE_DOCS,MERGE_SEGMENTS,MOVE_DOCS,BLOB_CHARS (10000,30000,12,6000,16000)]
#                                [-o RAW_OUTPUT (a file the RESULT lines and logs go to; also printed)]
#        jmh/opensearch-merge.sh -S RAW_OUTPUT   prints the tables and ratios of a raw output again, and nothing else
# Needs: root (cgroup v1 memory controller), python3, a JDK 22+ (as for the opensearch module), and once:
# mvn -q -B -ntp install -DskipTests -Dmaven.javadoc.skip=true -pl java,lucene -am
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
rounds=3 limit=1100 heap=512m stores=pagewise,hybridfs,mmapfs sizes=10000,30000,12,6000,16000 out= summary_of=
parse_options r=rounds m=limit x=heap d=stores s=sizes o=out S=summary_of -- "$@"

# summarize RAW_OUTPUT: medians per store of the RESULT lines, and per-round ratios against hybridfs and mmapfs.
summarize() {
python3 - "$1" <<'PY'
import statistics, sys
runs = [dict(f.split("=", 1) for f in line.split()[1:]) for line in open(sys.argv[1]) if line.startswith("RESULT ")]
if not runs:
    sys.exit("no RESULT lines in " + sys.argv[1])
num = lambda r, k: float(r[k])
cols = [("p50_before_ms", "p50 before ms"), ("p99_before_ms", "p99 before ms"), ("p50_during_ms", "p50 during ms"),
        ("p99_during_ms", "p99 during ms"), ("merge_s", "merge s"), ("move_s", "move s"),
        ("hot_before_pct", "hot before %"), ("hot_after_pct", "hot after %"), ("output_cached_pct", "merged cached %"),
        ("moved_cached_pct", "moved copy cached %"), ("cgroup_peak_mb", "cgroup peak MB"),
        ("searches_during", "searches during")]
stores = list(dict.fromkeys(r["store"] for r in runs))
print(f"\n## medians over {len(set(r['round'] for r in runs))} rounds")
print("| store | " + " | ".join(c[1] for c in cols) + " |")
print("|---" * (len(cols) + 1) + "|")
for s in stores:
    rows = [r for r in runs if r["store"] == s]
    cells = [(f"{statistics.median(num(r, k) for r in rows):.3f}" if k.endswith("_ms") else
              f"{statistics.median(num(r, k) for r in rows):.1f}") for k, _ in cols]
    print(f"| {s} | " + " | ".join(cells) + " |")
by_round = {}
for r in runs:
    by_round.setdefault(r["round"], {})[r["store"]] = r
print("\nper round: p99 during / before of each store; pagewise's p99 during and merge time over each other store's")
for rnd, g in sorted(by_round.items(), key=lambda kv: int(kv[0])):
    parts = [f"{s} p99 x{num(g[s], 'p99_during_ms') / num(g[s], 'p99_before_ms'):.2f}" for s in stores if s in g]
    if "pagewise" in g:
        for s in stores:
            if s != "pagewise" and s in g:
                parts.append(f"pagewise/{s}: p99 during {num(g['pagewise'], 'p99_during_ms') / num(g[s], 'p99_during_ms'):.2f},"
                             f" merge {num(g['pagewise'], 'merge_s') / num(g[s], 'merge_s'):.2f}")
    print(f"- round {rnd}: " + "; ".join(parts))
if "pagewise" in stores:
    for s in [s for s in stores if s != "pagewise"]:
        rounds = [g for g in by_round.values() if "pagewise" in g and s in g]
        if rounds:
            p99 = statistics.median(num(g["pagewise"], "p99_during_ms") / num(g[s], "p99_during_ms") for g in rounds)
            merge = statistics.median(num(g["pagewise"], "merge_s") / num(g[s], "merge_s") for g in rounds)
            print(f"- median of the per-round ratios, pagewise / {s}: p99 during {p99:.2f}, merge time {merge:.2f}")
PY
}
if [ -n "$summary_of" ]; then
    summarize "$summary_of"
    exit 0
fi
require_tools python3:python3
cgroups=/sys/fs/cgroup/memory
[ -w "$cgroups" ] || { echo "opensearch-merge: needs a writable cgroup v1 memory hierarchy at $cgroups (root)" >&2; exit 1; }
[ -n "$out" ] || out=$(mktemp /tmp/opensearch-merge.XXXXXX.txt)
log=$(mktemp /tmp/opensearch-merge-run.XXXXXX.log)
cgroup=
mvn_pid=

# cleanup: stops a run's Maven (and with it the test JVM), removes the run's cgroup once its JVM is gone.
cleanup() {
    if [ -n "$mvn_pid" ]; then
        kill -TERM "$mvn_pid" 2>/dev/null || true
        wait "$mvn_pid" 2>/dev/null || true
    fi
    if [ -n "$cgroup" ] && [ -d "$cgroup" ]; then
        local tries=0
        while [ -s "$cgroup/cgroup.procs" ] && [ $tries -lt 30 ]; do sleep 1; tries=$((tries + 1)); done
        rmdir "$cgroup" || echo "opensearch-merge: could not remove $cgroup" >&2
    fi
    rm -f "$log"
}
trap cleanup EXIT INT TERM

IFS=, read -r hot_docs merge_docs merge_segments move_docs blob_chars <<<"$sizes"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
    "read_ahead_kb $(cat "/sys/dev/block/$(stat -c '%Hd:%Ld' "$root")/queue/read_ahead_kb" 2>/dev/null || echo '?')" | tee -a "$out"
echo "# docs: hot $hot_docs, merge $merge_docs in $merge_segments segments, move $move_docs; blob $blob_chars chars;" \
    "limit ${limit} MiB; heap $heap; rounds $rounds; stores $stores" | tee -a "$out"

# run ROUND STORE: one failsafe run of the benchmark, its test JVM in a fresh cgroup.
run() {
    local round=$1 store=$2
    cgroup=$cgroups/pagewise-opensearch-bench.$$
    mkdir "$cgroup"
    [ "$limit" = 0 ] || echo $((limit << 20)) > "$cgroup/memory.limit_in_bytes"
    (cd "$root" && PAGEWISE_TEST_CGROUP=$cgroup exec mvn -B -ntp verify -pl opensearch -Dit.test=PagewiseMergeBench \
        -Dpagewise.bench="$store" -Dpagewise.bench.sizes="$sizes" \
        -Dopensearch.testHeap="$heap" > "$log" 2>&1) &
    mvn_pid=$!
    wait "$mvn_pid" || { tail -80 "$log" >&2; echo "opensearch-merge: $store run failed (log above)" >&2; exit 1; }
    mvn_pid=
    grep -E '^directory of hot|Tests run:.*PagewiseMergeBench' "$log" | sed "s/^/# $round $store: /" >> "$out" || true
    grep -q '^RESULT ' "$log" || { tail -80 "$log" >&2; echo "opensearch-merge: $store printed no RESULT" >&2; exit 1; }
    sed -n "s/^RESULT /RESULT round=$round load1=$(cut -d' ' -f1 /proc/loadavg) failcnt=$(cat "$cgroup/memory.failcnt") /p" "$log" \
        | tee -a "$out"
    local tries=0
    while [ -s "$cgroup/cgroup.procs" ] && [ $tries -lt 30 ]; do sleep 1; tries=$((tries + 1)); done
    rmdir "$cgroup"
    cgroup=
}

IFS=, read -r -a list <<<"$stores"
for round in $(seq 1 "$rounds"); do
    count=${#list[@]}
    for i in $(seq 0 $((count - 1))); do
        run "$round" "${list[$(((i + round - 1) % count))]}"
    done
done

summarize "$out" | tee -a "$out"
echo "raw output: $out"
