#!/usr/bin/env bash
# Whether FFM could replace JNI: the library's JNI read against FFM pread and preadv (FfmVsJniReadBenchmark), in interleaved rounds.
# Each round runs, per read size, one JMH fork of each path in an order rotated every round, so that load from
# other processes on a shared machine falls on all paths alike; summarize.sh prints the median score per path and
# the median of the per-round ratios FFM / JNI. Prints CSV: round,size,method,load1,score_ns,error_ns (load1 is
# the 1-minute load average when that fork started; score and error are JMH's for its 3 iterations).
#
# Usage: jmh/ffm-vs-jni-rounds.sh [-r ROUNDS (default 10)] [-b SIZES (default 4096,1048576)]
#                                  [-m METHODS (default jni,ffmPread,ffmPreadv; also fileChannel, storageFile)] > rounds.csv
# A method named NAME@ffm runs NAME with the jar's FFM classes on (the library's own FFM path on JDK 22+): the
# benchmark's forks otherwise turn them off, so that jni and storageFile are the JNI path.
# Needs: the benchmark jar built on JDK 22+ (JAVA_HOME=... mvn -q -f jmh/pom.xml package), and that JDK's java as
# $JAVA (default: java on the PATH); $JAR overrides jmh/target/benchmarks.jar.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
rounds=10 sizes=4096,1048576 methods=jni,ffmPread,ffmPreadv
parse_options r=rounds b=sizes m=methods -- "$@"
java=${JAVA:-java} jar=$(benchmarks_jar " on JDK 22+: mvn -q -f jmh/pom.xml package")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
IFS=, read -r -a methods <<< "$methods"
count=${#methods[@]}
echo "round,size,method,load1,score_ns,error_ns"
for round in $(seq 1 "$rounds"); do
    for size in ${sizes//,/ }; do
        for i in $(seq 0 $((count - 1))); do
            method=${methods[$(( (i + round) % count ))]}
            jvm_args=()
            [[ $method == *@ffm ]] && jvm_args=(-jvmArgsAppend --enable-native-access=ALL-UNNAMED)
            load=$(cut -d' ' -f1 /proc/loadavg)
            if ! "$java" -jar "$jar" "FfmVsJniReadBenchmark\.${method%@ffm}\$" -p size="$size" -p direct=false \
                    "${jvm_args[@]}" -f 1 -wi 2 -w 1 -i 3 -r 1 -rf csv -rff "$work/one.csv" > "$work/one.log" 2>&1; then
                echo "JMH failed for $method at $size bytes:" >&2
                cat "$work/one.log" >&2
                exit 1
            fi
            # JMH's CSV: "Benchmark","Mode","Threads","Samples","Score","Score Error (99.9%)",...
            tail -1 "$work/one.csv" | awk -F, -v r="$round" -v s="$size" -v m="$method" -v l="$load" \
                '{print r "," s "," m "," l "," $5 "," $6}'
        done
    done
done
