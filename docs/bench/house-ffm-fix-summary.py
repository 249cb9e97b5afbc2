# Summarises house-ffm-fix-*.json (run from any directory): python3 docs/bench/house-ffm-fix-summary.py
import json, glob, os, statistics, re, sys, collections
ratios = collections.defaultdict(list)   # (jdk, op, mode, jar) -> per-run ratios
allocs = collections.defaultdict(list)
for path in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'house-ffm-fix-*-jdk*-r*.json'))):
    jar, jdk, rnd = re.search(r'house-ffm-fix-(\w+)-jdk(\d+)-r(\d)\.json', path).groups()
    try:
        results = json.load(open(path))
    except Exception:
        continue
    for r in results:
        op = r["benchmark"].rsplit(".", 1)[1]
        mode = r["params"]["mode"]
        mine = [x for f in r["secondaryMetrics"]["pagewiseNanos"]["rawData"] for x in f]
        theirs = [x for f in r["secondaryMetrics"]["fileChannelNanos"]["rawData"] for x in f]
        ratios[(jdk, op, mode, jar)].append(statistics.median([t / m for m, t in zip(mine, theirs)]))
        allocs[(jdk, op, mode, jar)].append(r["secondaryMetrics"]["gc.alloc.rate.norm"]["score"])
jars = ["before", "after", "fix"]
print("FileChannel time / pagewise time: geometric mean of the runs (rounds x swapFiles); B/op: gc.alloc.rate.norm, min-max of the runs")
print("| JDK | op | mode | " + " | ".join(f"{j} ratio" for j in jars) + " | fix / after | fix / before | " + " | ".join(f"{j} B/op" for j in jars) + " |")
print("|---" * (3 + 2 * len(jars) + 2) + "|")
for jdk in ["25", "17"]:
    for op in ["read", "write"]:
        for mode in ["WRITEBACK", "EVICT", "DIRECT"]:
            g = {j: statistics.geometric_mean(ratios[(jdk, op, mode, j)]) if ratios[(jdk, op, mode, j)] else float('nan') for j in jars}
            a = {j: allocs[(jdk, op, mode, j)] for j in jars}
            fmt = lambda xs: (f"{min(xs):.1f}–{max(xs):.1f}" if xs else "-")
            n = {j: len(ratios[(jdk, op, mode, j)]) for j in jars}
            print(f"| {jdk} | {op} | {mode} | " + " | ".join(f"{g[j]:.3f} ({n[j]})" for j in jars)
                  + f" | {g['fix']/g['after']:.3f} | {g['fix']/g['before']:.3f} | " + " | ".join(fmt(a[j]) for j in jars) + " |")
