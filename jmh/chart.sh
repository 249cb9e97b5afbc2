#!/usr/bin/env bash
# Draws time vs residency per server and mode from compare-servers.sh results.csv (median of rounds).
# The fast-and-clean corner is bottom left. Needs gnuplot (Debian: gnuplot-nox).
set -euo pipefail
csv=${1:?usage: chart.sh results.csv chart.png}
png=${2:?usage: chart.sh results.csv chart.png}
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
python3 - "$csv" "$data" <<'PY'
import csv, statistics, sys
path, out = sys.argv[1:3]
rows = list(csv.DictReader(open(path)))
tests = [t for t in ("read", "write") if any(r["test"] == t for r in rows)]
open(f"{out}/tests", "w").write(" ".join(tests))
for test in tests:
    with open(f"{out}/{test}.dat", "w") as f:
        configs = sorted({r["config"] for r in rows if r["test"] == test})
        for c in configs:
            runs = [r for r in rows if r["test"] == test and r["config"] == c]
            t = statistics.median(float(r["seconds"]) for r in runs)
            res = statistics.median(float(r["resident_percent"]) for r in runs)
            f.write(f"{t:.3f} {res:.2f} {c}\n")
PY
tests=$(cat "$data/tests")
panels=$(echo "$tests" | wc -w)
gnuplot <<GP
set terminal pngcairo size $((600 * panels)),520 font ",10"
set output "$png"
set multiplot layout 1,$panels title "NBD servers: time to copy the file with nbdcopy vs page cache left behind (lower left is better)"
do for [test in "$tests"] {
    set title test
    set xlabel "median seconds"
    set ylabel "file left in page cache (%)"
    set yrange [-5:105]
    set xrange [0:*]
    set grid
    unset key
    plot "$data/".test.".dat" using 1:2 with points pt 7 ps 1.5 lc rgb "#1f77b4", \
         "" using 1:2:3 with labels offset 0,1 font ",9"
}
unset multiplot
GP
echo "chart written to $png" >&2
