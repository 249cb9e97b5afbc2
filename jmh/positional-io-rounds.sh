#!/usr/bin/env bash
# 4 KiB I/O against the JDK's: StorageFile's positional read and write against FileChannel's (PositionalIoBenchmark),
# in interleaved rounds. Each round runs one JMH fork per operation, buffer kind and API, the two APIs in an order
# rotated every round, so that load from other processes falls on both alike; summarize.sh prints the median of the
# per-round ratios pagewise / FileChannel. Prints CSV: round,threads,op,buffer,api,load1,ops_per_s,error (load1 is
# the 1-minute load average when that fork started; score and error are JMH's for its iterations).
#
# Usage: jmh/positional-io-rounds.sh [-r ROUNDS (default 5)] [-t THREADS (default 1)] [-s SIZE (default 4096)]
#                                    [-m MODE (default WRITEBACK)] > rounds.csv
# Needs jmh/target/benchmarks.jar (mvn -q install -DskipTests && mvn -q -f jmh/pom.xml package); $JAVA is the JVM
# (default java on the PATH: JDK 17 uses the JNI calls, 22+ the FFM ones).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
rounds=5 threads=1 size=4096 mode=WRITEBACK
parse_options r=rounds t=threads s=size m=mode -- "$@"
java=${JAVA:-java} jar=$(benchmarks_jar ": mvn -q install -DskipTests && mvn -q -f jmh/pom.xml package")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
apis=(pagewise filechannel)
echo "round,threads,op,buffer,api,load1,ops_per_s,error"
for round in $(seq 1 "$rounds"); do
    for op in read write; do
        for buffer in direct heap; do
            for i in 0 1; do
                api=${apis[$(( (i + round) % 2 ))]}
                load=$(cut -d' ' -f1 /proc/loadavg)
                if ! "$java" -jar "$jar" "PositionalIoBenchmark\.$op\$" -p size="$size" -p via="$api" \
                        -p buffer="$buffer" -p mode="$mode" -t "$threads" -f 1 -wi 2 -w 1 -i 3 -r 1 \
                        -rf csv -rff "$work/one.csv" > "$work/one.log" 2>&1; then
                    echo "JMH failed for $op $buffer $api:" >&2
                    cat "$work/one.log" >&2
                    exit 1
                fi
                # JMH's CSV: "Benchmark","Mode","Threads","Samples","Score","Score Error (99.9%)",...; the first row
                # is the benchmark's ops/s (the bytes counter follows).
                sed -n 2p "$work/one.csv" | awk -F, -v r="$round" -v t="$threads" -v o="$op" -v b="$buffer" -v a="$api" \
                    -v l="$load" '{print r "," t "," o "," b "," a "," l "," $5 "," $6}'
            done
        done
    done
done
