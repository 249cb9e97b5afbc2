#!/usr/bin/env bash
# Draws time vs residency per server and mode from compare-servers.sh results.csv (median of rounds), one panel
# per test. The fast-and-clean corner is bottom left. Needs gnuplot (Debian: gnuplot-nox) and python3.
set -euo pipefail
csv=${1:?usage: chart.sh results.csv chart.png}
png=${2:?usage: chart.sh results.csv chart.png}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$csv" "$work" "$png" <<'PY'
import csv, statistics, sys
path, work, png = sys.argv[1:4]
rows = list(csv.DictReader(open(path)))
tests = [t for t in ("read", "write") if any(r["test"] == t for r in rows)]
configs = sorted({r["config"] for r in rows}, key=lambda c: (not c.startswith("pagewise"), c))
plot = [f'set terminal pngcairo size {520 * len(tests) + 260},520 font ",10"', f'set output "{png}"',
        f'set multiplot layout 1,{len(tests)} title "NBD servers: time for nbdcopy vs page cache left behind (bottom left is best)"',
        'set grid', 'set yrange [-5:105]', 'set xrange [0:*]', 'set ylabel "file left in page cache (%)"',
        'set xlabel "median seconds"']
palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f", "#bcbd22"]
for n, test in enumerate(tests):
    for i, c in enumerate(configs):
        runs = [r for r in rows if r["test"] == test and r["config"] == c]
        if not runs:
            continue
        t = statistics.median(float(r["seconds"]) for r in runs)
        res = statistics.median(float(r["resident_percent"]) for r in runs)
        plot.append(f"$d{n}_{i} << EOD\n{t:.3f} {res:.2f}\nEOD")
    plot.append(f'set title "{test}"')
    if n < len(tests) - 1:
        plot.append("unset key")
    else:
        plot.append('set key outside right top vertical font ",9"')
    body = []
    for i, c in enumerate(configs):
        if any(r["test"] == test and r["config"] == c for r in rows):
            point = 7 if c.startswith("pagewise") else 9
            body.append(f"$d{n}_{i} using 1:2 with points pt {point} ps 1.8 lc rgb '{palette[i % len(palette)]}' title '{c}'")
    plot.append("plot " + ", ".join(body))
plot.append("unset multiplot")
open(f"{work}/chart.gp", "w").write("\n".join(plot) + "\n")
PY
gnuplot "$work/chart.gp"
echo "chart written to $png" >&2
