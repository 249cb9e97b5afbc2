#!/usr/bin/env bash
# 4 KiB random O_DIRECT reads and writes over a file larger than any cache involved, side by side in rounds: pagewise
# asynchronous I/O from one thread (StorageFile.readAsync/writeAsync, DIRECT, queue depth N), FileChannel with N
# threads (O_DIRECT), and fio --ioengine=io_uring --iodepth=N, at N = 1, 8 and 32; then 1,000 virtual threads on 2
# carriers (jdk.virtualThreadScheduler.parallelism=maxPoolSize=2) doing blocking 4 KiB DIRECT reads through
# StorageFile and through FileChannel. Each run prints a RESULT line: I/Os a second and CPU time per I/O (the
# process's for Java, fio's usr+sys). The order of the methods rotates per round. Every run warms up for -w seconds
# first that are not counted (Java: the JIT compiles meanwhile; fio: --ramp_time).
#
# Usage: jmh/async-io.sh [-r ROUNDS (3)] [-s SECONDS per run (8)] [-w WARMUP_SECONDS (2)]
#                        [-f FILE (/var/tmp/pagewise-async-bench.bin)]
#                        [-g SIZE_GIB (4)] [-j JAVA (/usr/lib/jvm/temurin-25-jdk-amd64/bin/java)] [-o RAW_OUTPUT]
# Needs: fio, python3, the JMH jar (mvn -q install -DskipTests -Dmaven.javadoc.skip=true, then cd jmh && mvn -q
# package -DskipTests). The file is made once with fio (random data, written by O_DIRECT) and kept.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
rounds=3 seconds=8 warmup=2 file=/var/tmp/pagewise-async-bench.bin gib=4 java=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java out=
parse_options r=rounds s=seconds w=warmup f=file g=gib j=java o=out -- "$@"
require_tools fio:fio python3:python3
jar="$root/jmh/target/benchmarks.jar"
[ -f "$jar" ] || { echo "async-io: build the JMH jar first (see -h)" >&2; exit 1; }
[ -n "$out" ] || out=$(mktemp /tmp/pagewise-async-io.XXXXXX)
if [ "$(stat -c %s "$file" 2>/dev/null || echo 0)" != $((gib << 30)) ]; then
    rm -f "$file"
    fio --name=fill --filename="$file" --size=${gib}G --rw=write --bs=1M --direct=1 --ioengine=io_uring \
        --iodepth=8 --refill_buffers --output=/dev/null
fi
jvm=("$java" -XX:+IgnoreUnrecognizedVMOptions --enable-native-access=ALL-UNNAMED -cp "$jar")
{
    echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $(nproc) cores, $("$java" -version 2>&1 | head -1)," \
        "$(fio --version), $file ($gib GiB), $seconds s per run after $warmup s of warm-up, rounds $rounds"
} | tee "$out"

fio_run() { # op depth
    local rw=randread
    [ "$1" = write ] && rw=randwrite
    fio --name=bench --filename="$file" --direct=1 --rw=$rw --bs=4k --ioengine=io_uring --iodepth="$2" \
        --time_based --runtime="$seconds" --ramp_time="$warmup" --norandommap --randrepeat=0 --output-format=json \
        | python3 -c '
import json, sys
job = json.load(sys.stdin)["jobs"][0]
side = job[sys.argv[1]]
ios = side["total_ios"]
runtime = job["job_runtime"] / 1000.0
cpu = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * runtime
print("RESULT op=%s method=fio-io_uring n=%s iops=%.0f cpu_us_per_io=%.2f ios=%d seconds=%.1f" % (
    sys.argv[1], sys.argv[2], ios / runtime, cpu * 1e6 / max(1, ios), ios, runtime))
' "$1" "$2"
}

for round in $(seq 1 "$rounds"); do
    for op in read write; do
        for depth in 1 8 32; do
            methods=(pagewise-async filechannel fio)
            for i in 0 1 2; do
                method=${methods[$(((i + round - 1) % 3))]}
                if [ "$method" = fio ]; then
                    line=$(fio_run "$op" "$depth")
                else
                    line=$("${jvm[@]}" io.pagewise.jmh.AsyncIoBench "$file" "$seconds" "$op" "$method" "$depth" "$warmup" | grep '^RESULT')
                fi
                echo "${line/RESULT /RESULT round=$round }" | tee -a "$out"
            done
        done
    done
    for method in pagewise-virtual filechannel-virtual; do
        line=$("${jvm[@]}" -Djdk.virtualThreadScheduler.parallelism=2 -Djdk.virtualThreadScheduler.maxPoolSize=2 \
            io.pagewise.jmh.AsyncIoBench "$file" "$seconds" read "$method" 1000 "$warmup" | grep '^RESULT')
        echo "${line/RESULT /RESULT round=$round }" | tee -a "$out"
    done
done
echo "# raw: $out"
