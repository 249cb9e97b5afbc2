#!/usr/bin/env bash
# A Lucene force-merge beside a searched and an idle index, in a memory cgroup, through each of PagewiseDirectory,
# MMapDirectory, NIOFSDirectory and DirectIODirectory (lucene-misc, over MMapDirectory). One JVM per run (-Xmx256m)
# opens all three indices through the same Directory class (io.pagewise.jmh.lucene.LuceneMergeWorkload):
#   - the idle index (~300 MB) is read whole through the directory, then left alone;
#   - the searched index (~300 MB) is read whole, then searched by one thread (term queries, 5 stored documents
#     fetched each) for 10 s ("before") and on through the merge ("during");
#   - the merge index (~1.6 GB, 14 segments, no compound files) is force-merged to one segment from a fresh copy
#     (hard links of the built one: Lucene never rewrites a file, so the copy's new files are the merge's own).
# All three are evicted (fadvise DONTNEED, file by file) at the start of every run, so every page the run holds is
# charged to its own cgroup. Each run gets a fresh memory cgroup v1 under /sys/fs/cgroup/memory/ (limit -m MiB; a
# second pass, -u rounds of it, without a limit), removed when the run ends. Directories alternate within a round, in an
# order rotated per round. The indices are built once into -b DIR and reused.
#
# Usage: jmh/lucene-merge.sh [-r ROUNDS (3)] [-m LIMIT_MIB (1100)] [-u ROUNDS_WITHOUT_LIMIT (as -r; 0: none)]
#                            [-d DIRECTORIES (pagewise,mmap,niofs,directio; also pagewise-mwKIB: a merge read window of
#                                KIB, PagewiseDirectory.Builder.mergeReadWindow; pagewise-bw: EVICT writes buffered,
#                                -Dpagewise.evict.direct-writes=false; pagewise-na: outputs not allocated ahead of
#                                their writes, -Dpagewise.lucene.no-allocate-ahead=true; pagewise-nh: output buffers
#                                not in huge pages, -Dpagewise.huge-page-buffers=false; pagewise-sync: merge and flush writes
#                                waited for one at a time, Builder.asyncWrites(false))] [-l LUCENE (9 on java 17 | 10)]
#                            [-j JAVA (java; for -l 10 a JDK 21+)] [-b BUILD_DIR (/var/tmp/pagewise-lucene-bench, -lucene10 for -l 10)]
#                            [-s SEARCHED_DOCS,IDLE_DOCS,MERGE_DOCS,MERGE_SEGMENTS (205000,205000,1100000,14)]
#                            [-w WARM_MERGE_DOCS (0): first a warm-up merge of that many documents (10 segments) through
#                                the same directory class, then searches until the JIT is quiet, so that the merge
#                                measured is not the JVM's first (as on a node that merges all day); 0: it is]
#                            [-W WARM_MERGES (1): how many times the warm-up merges its segments, from a fresh copy each
#                                time: code that only a large merge makes hot is otherwise compiled during the merge]
#                            [-B 0|1 (0): 1, the warm-up merges run while the searched index is searched, as the merge
#                                measured does, so that code both call is compiled for both kinds of input beforehand]
#                            [-o RAW_OUTPUT (a file the RESULT lines and logs go to; also printed)]
#        jmh/lucene-merge.sh -S RAW_OUTPUT   prints the tables and verdicts of a raw output again, and nothing else
# LUCENE_MERGE_JVM_OPTIONS: more options for every workload JVM (a -D to try a setting on all directories alike).
# Needs: root (cgroup v1 memory controller), vmtouch, python3, the JMH jar (cd jmh && mvn -q package -DskipTests,
# after mvn -q install -DskipTests -Dmaven.javadoc.skip=true in the checkout).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
rounds=3 limit=1100 unlimited= dirs=pagewise,mmap,niofs,directio lucene=9 java=java
build= sizes=205000,205000,1100000,14 out= summary_of= warm=0 warm_merges=1 beside=0
parse_options r=rounds m=limit u=unlimited d=dirs l=lucene j=java b=build s=sizes o=out S=summary_of w=warm W=warm_merges B=beside -- "$@"
[[ "$warm" =~ ^[0-9]+$ ]] || { echo "lucene-merge: -w wants a number of documents, not '$warm'" >&2; exit 2; }
[[ "$warm_merges" =~ ^[1-9][0-9]*$ ]] || { echo "lucene-merge: -W wants a number of merges (1 or more), not '$warm_merges'" >&2; exit 2; }
[[ "$beside" =~ ^[01]$ ]] || { echo "lucene-merge: -B wants 0 or 1, not '$beside'" >&2; exit 2; }

# summarize RAW_OUTPUT: medians per directory of the RESULT lines, and PagewiseDirectory's goals as ratios per round.
summarize() {
python3 - "$1" <<'PY'
import statistics, sys
runs = []
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        runs.append(dict(f.split("=", 1) for f in line.split()[1:]))
def num(r, k):
    return float(r[k])
cols = [("p50_before_ms", "p50 before ms"), ("p99_before_ms", "p99 before ms"), ("p50_during_ms", "p50 during ms"),
        ("p99_during_ms", "p99 during ms"), ("merge_s", "merge s"), ("searched_before_pct", "searched before %"),
        ("searched_after_pct", "searched after %"), ("idle_before_pct", "idle before %"),
        ("idle_after_pct", "idle after %"), ("output_cached_pct", "output cached %"),
        ("left_by_merge_reads_pct", "left by merge reads %"), ("sources_cached_peak_mb", "sources cached peak MB"),
        ("cgroup_peak_mb", "cgroup peak MB"), ("disk_read_mb", "disk read MB"),
        ("disk_read_requests", "disk read requests"), ("disk_write_requests", "disk write requests"),
        ("damon_pageout_mb", "DAMON paged out MB"), ("jit_before_ms", "JIT ms before"),
        ("jit_during_ms", "JIT ms during"), ("gc_before_ms", "GC ms before"), ("gc_during_ms", "GC ms during")]
for mode in ("limit", "none"):
    mine = [r for r in runs if r["mode"] == mode]
    if not mine:
        continue
    dirs = list(dict.fromkeys(r["dir"] for r in mine))
    cols_here = [c for c in cols if all(c[0] in r for r in mine)]
    print(f"\n## {'memory cgroup limit' if mode == 'limit' else 'no limit'}: medians over "
          f"{len(set(r['round'] for r in mine))} rounds")
    print("| directory | " + " | ".join(c[1] for c in cols_here) + " |")
    print("|---" * (len(cols_here) + 1) + "|")
    for d in dirs:
        rows = [r for r in mine if r["dir"] == d]
        cells = []
        for key, _ in cols_here:
            med = statistics.median(num(r, key) for r in rows)
            if key.startswith(("jit_", "gc_")):
                cells.append(f"{med:.0f}")
            else:
                cells.append(f"{med:.3f}" if key.endswith("_ms") else f"{med:.1f}" if key != "left_by_merge_reads_pct" else f"{med:.2f}")
        print(f"| {d} | " + " | ".join(cells) + " |")
    by_round = {}
    for r in mine:
        by_round.setdefault(r["round"], {})[r["dir"]] = r
    for pw in [d for d in dirs if d.startswith("pagewise")]:
        goals = [
            ("idle index keeps >= 95% of its pages", lambda g: num(g[pw], "idle_after_pct") / max(num(g[pw], "idle_before_pct"), 1e-9), ">=", 0.95),
            ("searched index keeps >= 95% of its pages", lambda g: num(g[pw], "searched_after_pct") / max(num(g[pw], "searched_before_pct"), 1e-9), ">=", 0.95),
            ("search p99 during / before <= 1.2", lambda g: num(g[pw], "p99_during_ms") / num(g[pw], "p99_before_ms"), "<=", 1.2),
            ("merge time / MMapDirectory's <= 1.1", lambda g: num(g[pw], "merge_s") / num(g["mmap"], "merge_s") if "mmap" in g else None, "<=", 1.1),
            ("merge time / DirectIODirectory's < 1", lambda g: num(g[pw], "merge_s") / num(g["directio"], "merge_s") if "directio" in g else None, "<", 1.0),
            ("pages left cached by merge reads <= 1%", lambda g: num(g[pw], "left_by_merge_reads_pct"), "<=", 1.0),
        ]
        print(f"\n{pw}: goals ({mode}), a ratio per round from that round's runs; the median decides")
        for name, ratio, op, bound in goals:
            values = [v for g in by_round.values() if pw in g for v in [ratio(g)] if v is not None]
            if not values:
                continue
            med = statistics.median(values)
            met = {">=": med >= bound, "<=": med <= bound, "<": med < bound}[op]
            print(f"- {name}: rounds {', '.join(f'{v:.3f}' for v in values)}; median {med:.3f} -> {'met' if met else 'MISSED'}")
PY
}
if [ -n "$summary_of" ]; then
    summarize "$summary_of"
    exit 0
fi
require_tools vmtouch:vmtouch python3:python3
# Lucene 10 reads no Lucene 9 index without lucene-backward-codecs, so each line builds its own.
[ -n "$build" ] || build=/var/tmp/pagewise-lucene-bench$([ "$lucene" = 9 ] || echo "-lucene$lucene")
jar=$(benchmarks_jar ": cd jmh && mvn -q package -DskipTests")
[ -d "$root/jmh/target/lucene$lucene" ] || { echo "no jmh/target/lucene$lucene; build the JMH jar" >&2; exit 1; }
classpath="$jar:$root/jmh/target/lucene$lucene/*"
cgroups=/sys/fs/cgroup/memory
[ -w "$cgroups" ] || { echo "lucene-merge: needs a writable cgroup v1 memory hierarchy at $cgroups (root)" >&2; exit 1; }
[ -n "$out" ] || out=$(mktemp /tmp/lucene-merge.XXXXXX.txt)
work=$build/work.$$
cgroup=
java_pid=

# cleanup: stops the run's JVM, removes the run's cgroup (empty once the JVM is gone; its page cache goes to the
# parent) and the copies.
cleanup() {
    if [ -n "$java_pid" ]; then
        kill -TERM "$java_pid" 2>/dev/null || true
        wait "$java_pid" 2>/dev/null || true
    fi
    if [ -n "$cgroup" ] && [ -d "$cgroup" ]; then
        rmdir "$cgroup" || echo "lucene-merge: could not remove $cgroup" >&2
    fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
mkdir -p "$build" "$work"

IFS=, read -r searched_docs idle_docs merge_docs merge_segments <<<"$sizes"
"$java" -Xmx3g -cp "$classpath" io.pagewise.jmh.lucene.LuceneMergeWorkload build "$build" \
    "$searched_docs" "$idle_docs" "$merge_docs" "$merge_segments" | tee -a "$out"
index_mb() { du -sm "$build/$1" | cut -f1; }
{
    echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $(nproc) cores, $("$java" -version 2>&1 | head -1)," \
        "Lucene $(basename "$root"/jmh/target/lucene"$lucene"/lucene-core-*.jar .jar | sed 's/lucene-core-//')"
    echo "# searched $(index_mb searched) MB ($searched_docs docs), idle $(index_mb idle) MB ($idle_docs docs)," \
        "merge $(index_mb merge) MB ($merge_docs docs, $merge_segments segments); limit ${limit} MiB; rounds $rounds$( [ "$warm" = 0 ] || echo "; warm-up merge of $warm docs, $warm_merges times$([ "$beside" = 0 ] || echo ", beside searches")")"
} | tee -a "$out"

# The bytes a DAMON "pageout" scheme of this kernel, where one runs (e.g. a VM that returns cold memory to its
# host), has paged out so far; 0 without one. Read only: it reclaims page cache untouched for a while, whoever's.
damon_bytes() {
    local total=0 f
    for f in /sys/kernel/mm/damon/admin/kdamonds/*/contexts/*/schemes/*/stats/sz_applied; do
        [ -f "$f" ] && [ "$(cat "${f%/stats/sz_applied}/action")" = pageout ] && total=$((total + $(cat "$f")))
    done
    echo "$total"
}
damon_mb() { echo $((($(damon_bytes) - $1) >> 20)); }

# The bytes read and written so far by the disk $build is on (other processes' I/O included), and the requests that
# took them (each one an interrupt to some CPU), as "read written reads writes".
disk_stat=/sys/dev/block/$(stat -c '%Hd:%Ld' "$build")/stat
disk_bytes() {
    if [ -f "$disk_stat" ]; then awk '{ printf "%.0f %.0f %d %d\n", $3 * 512, $7 * 512, $1, $5 }' "$disk_stat"; else echo "0 0 0 0"; fi
}
disk_mb() {
    local rb wb qrb qwb ra wa qra qwa
    read -r rb wb qrb qwb <<<"$1"
    read -r ra wa qra qwa <<<"$2"
    echo "disk_read_mb=$(((ra - rb) >> 20)) disk_written_mb=$(((wa - wb) >> 20))" \
        "disk_read_requests=$((qra - qrb)) disk_write_requests=$((qwa - qwb))"
}

# run MODE ROUND DIRECTORY: one JVM in a fresh cgroup (MODE limit: memory.limit_in_bytes = $limit MiB).
cross_checked=no
run() {
    local mode=$1 round=$2 dir=$3 copy=$work/merge links=$work/links
    rm -rf "$copy" "$links" "$links-warm" "$links-warm-"*
    cp -al "$build/merge" "$copy"
    rm -f "$copy/write.lock" "$copy/built"
    cgroup=$cgroups/pagewise-lucene-bench.$$
    mkdir "$cgroup"
    [ "$mode" != limit ] || echo $((limit << 20)) > "$cgroup/memory.limit_in_bytes"
    local damon_before disk_before disk_after
    damon_before=$(damon_bytes)
    disk_before=$(disk_bytes)
    local options=(-Xmx256m -XX:+IgnoreUnrecognizedVMOptions --enable-native-access=ALL-UNNAMED
        -Dwarm.merge.docs="$warm" -Dwarm.merges="$warm_merges" -Dwarm.beside.searches="$([ "$beside" = 1 ] && echo true || echo false)" ${LUCENE_MERGE_JVM_OPTIONS:-})
    # pagewise-bw: EVICT writes buffered, written back and dropped behind, never by O_DIRECT.
    [ "$dir" != pagewise-bw ] || options+=(-Dpagewise.evict.direct-writes=false)
    [ "$dir" != pagewise-na ] || options+=(-Dpagewise.lucene.no-allocate-ahead=true)
    [ "$dir" != pagewise-nh ] || options+=(-Dpagewise.huge-page-buffers=false)
    # The JVM joins the cgroup before it starts: sh writes its own pid, then execs java.
    sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cgroup" "$java" "${options[@]}" \
        -cp "$classpath" io.pagewise.jmh.lucene.LuceneMergeWorkload run "$dir" "$build/searched" "$build/idle" \
        "$copy" "$links" "$cgroup" > "$work/run.log" 2>&1 &
    java_pid=$!
    wait "$java_pid" || { cat "$work/run.log" >&2; echo "lucene-merge: $dir run failed" >&2; exit 1; }
    java_pid=
    disk_after=$(disk_bytes)
    grep -v '^RESULT ' "$work/run.log" | sed "s/^/# $mode $round $dir: /" >> "$out" || true
    sed -n "s/^RESULT /RESULT mode=$mode round=$round load1=$(cut -d' ' -f1 /proc/loadavg) damon_pageout_mb=$(damon_mb "$damon_before") $(disk_mb "$disk_before" "$disk_after") /p" "$work/run.log" \
        | tee -a "$out"
    if [ "$cross_checked" = no ]; then
        # What vmtouch sees of the searched and the idle index right after the run, against the run's own numbers.
        cross_checked=yes
        echo "# vmtouch after $mode $round $dir: searched $(resident_percent "$build/searched")%," \
            "idle $(resident_percent "$build/idle")%" | tee -a "$out"
    fi
    rmdir "$cgroup"
    cgroup=
    rm -rf "$copy" "$links" "$links-warm" "$links-warm-"*
}

IFS=, read -r -a directories <<<"$dirs"
[ -n "$unlimited" ] || unlimited=$rounds
for mode in limit none; do
    mode_rounds=$rounds
    [ "$mode" = limit ] || mode_rounds=$unlimited
    for round in $(seq 1 "$mode_rounds"); do
        count=${#directories[@]}
        for i in $(seq 0 $((count - 1))); do
            run "$mode" "$round" "${directories[$(((i + round - 1) % count))]}"
        done
    done
done

summarize "$out" | tee -a "$out"
echo "raw output: $out"
