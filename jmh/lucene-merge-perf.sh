#!/usr/bin/env bash
# Runs jmh/lucene-merge.sh (one round, warm JVM) for each directory in DIRS and records `perf` during the first
# SECONDS of each measured merge: from the log line "merge started" to SECONDS later, system-wide.
#
# Usage: jmh/lucene-merge-perf.sh DIRS OUT_PREFIX [SECONDS (12)] [PERF_RECORD_COMMAND ("perf sched record -a")]
#   writes OUT_PREFIX-DIR.data (perf's), OUT_PREFIX-DIR.tids (the workload JVM's threads: tid and name) and
#   OUT_PREFIX.txt (lucene-merge.sh's raw output). The searcher is the JVM's "java" thread after the first.
# Then, for instance:
#   perf script -i OUT_PREFIX-pagewise.data -F cpu,time,event,trace | jmh/sched-blame.py SEARCHER_TID
#   perf script -i OUT_PREFIX-pagewise.data -F trace | grep -o 'function=[^ ]* workqueue=[^ ]*' | sort | uniq -c
# Needs: root, linux-perf, and what lucene-merge.sh needs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
dirs=$1 prefix=$2 seconds=${3:-12} record=${4:-perf sched record -a}
build=/var/tmp/pagewise-lucene-bench
"$root/jmh/lucene-merge.sh" -r 1 -u 0 -w 200000 -d "$dirs" -o "$prefix.txt" > "$prefix.log" 2>&1 &
bench=$!
recorded=" "
while kill -0 "$bench" 2>/dev/null; do
    for log in "$build"/work.*/run.log; do
        [ -f "$log" ] && grep -q "merge started" "$log" 2>/dev/null || continue
        pid=$(pgrep -f "LuceneMergeWorkload run" | head -1) || continue
        dir=$(tr '\0' ' ' < "/proc/$pid/cmdline" | grep -o 'LuceneMergeWorkload run [a-z0-9-]*' | awk '{print $3}')
        case $recorded in *" $dir "*) continue ;; esac
        recorded="$recorded$dir "
        for task in /proc/"$pid"/task/*; do echo "${task##*/} $(cat "$task/comm" 2>/dev/null)"; done > "$prefix-$dir.tids"
        # shellcheck disable=SC2086 # the record command is words
        $record -o "$prefix-$dir.data" -- sleep "$seconds" > /dev/null 2>&1
    done
    sleep 0.2
done
wait "$bench"
echo "raw output: $prefix.txt; perf data: $prefix-*.data"
