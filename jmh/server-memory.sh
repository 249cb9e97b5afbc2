#!/usr/bin/env bash
# M1: peak resident memory (VmHWM) of the pagewise server while nbdcopy reads and writes an image with
# 4 connections x 64 requests. Usage: jmh/server-memory.sh [SIZE] [MODE]   (default 2G evict)
# Needs (Debian): libnbd-bin (nbdcopy). Installs nothing itself.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-2G} mode=${2:-evict}
command -v nbdcopy >/dev/null || { echo "needs nbdcopy: apt-get install -y libnbd-bin" >&2; exit 1; }
jar=$(ls "$root"/target/pagewise-*.jar | grep -v -e sources -e javadoc | head -1)
work=$(mktemp -d /var/tmp/pagewise-mem.XXXXXX)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
head -c "$size" /dev/urandom > "$work/src.raw"
truncate -s "$(stat -c %s "$work/src.raw")" "$work/disk.raw"
java -jar "$jar" serve --socket="$work/sock" --cache="$mode" "$work/disk.raw" 2>"$work/log" &
pid=$!
for _ in $(seq 100); do [ -S "$work/sock" ] && break; sleep 0.1; done
uri="nbd+unix:///?socket=$work/sock"
nbdcopy -C 4 --requests=64 "$work/src.raw" "$uri"
nbdcopy -C 4 --requests=64 "$uri" null:
grep -E 'VmHWM|VmRSS' "/proc/$pid/status"
