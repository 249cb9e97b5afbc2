#!/usr/bin/env bash
# Summarizes compare-servers.sh results.csv: per test and config, median and min seconds, median residency,
# and the paired ratio (median over rounds of config/reference in the same round).
# Reference rows: READ_REF (default nbdkit) and WRITE_REF (default nbdkit-none).
set -euo pipefail
csv=${1:?usage: summarize.sh results.csv}
python3 - "$csv" "${READ_REF:-nbdkit}" "${WRITE_REF:-nbdkit-none}" <<'PY'
import csv, statistics, sys
path, read_ref, write_ref = sys.argv[1:4]
rows = list(csv.DictReader(open(path)))
refs = {"read": read_ref, "write": write_ref}
for test in ("read", "write"):
    mine = [r for r in rows if r["test"] == test]
    if not mine:
        continue
    ref = refs[test]
    ref_time = {r["round"]: float(r["seconds"]) for r in mine if r["config"] == ref}
    print(f"\n{test} (paired ratio against {ref})")
    print("| server and options | median s | min s | left resident | paired |")
    print("|---|---|---|---|---|")
    configs = []
    for r in mine:
        if r["config"] not in configs:
            configs.append(r["config"])
    for config in sorted(configs):
        runs = [r for r in mine if r["config"] == config]
        times = [float(r["seconds"]) for r in runs]
        resident = statistics.median(float(r["resident_percent"]) for r in runs)
        ratios = [float(r["seconds"]) / ref_time[r["round"]] for r in runs if r["round"] in ref_time]
        paired = f"{statistics.median(ratios):.2f}" if ratios else "n/a"
        print(f"| {config} | {statistics.median(times):.2f} | {min(times):.2f} | {resident:.2f} % | {paired} |")
PY
