#!/usr/bin/env bash
# Prints the tables and the target verdicts of docs/BENCHMARKS.md and docs/bench/LOG.md from the raw results, so
# that every figure there can be checked:  jmh/summarize.sh docs/bench/*
# Each FILE is recognised by its content:
#   round,test,config,seconds,...       compare-servers.sh results.csv: median/min/max seconds, median residency and
#                                       the paired ratio per config, then targets R1, R2, W1, D1, C1 (clean
#                                       modes vs the best peer), dontcache writes vs nbdkit cache=none (bookworm
#                                       and 1.42),
#                                       clean modes vs the disk's limit (fio-direct, fio-buffered rows); given
#                                       several runs of the same tests and configs, also all their rounds pooled
#                                       (each paired within its own run)
#   round test config wall_s ...        jmh/server-cpu.sh output: the server's CPU (user + system) per GiB, target C2
#   round,test,server,tool,...          compare-copy.sh copy.csv: pagewise copy vs nbdcopy per test, with the
#                                       verdict: no slower and leaves <= 1 % of the files it reads or writes
#   mode,op,sizeMiB,...                 CacheModeBenchmark's CSV (first row of each mode and op is the warm-up)
#   JMH text output of PositionalIoBenchmark: target J1
#   JMH text output of FfmVsJniReadBenchmark (JDK 22+): JNI-or-FFM reads (no verdict: see the rounds)
#   round,threads,op,buffer,api,...   jmh/positional-io-rounds.sh: StorageFile vs FileChannel, paired per round
#   JMH JSON output (-rf json) of PairedPositionalIoBenchmark: both APIs timed call by call, per case
#   JMH JSON output (-rf json) of PositionalIoBenchmark: per thread count, op, buffer and cache mode;
#                                       given several, also every case over all of them, their forks pooled
#   round,size,method,load1,...         jmh/ffm-vs-jni-rounds.sh: the same in interleaved rounds, medians and paired
#   jmh/server-memory.sh output: target M1
#   jmh/dontcache-disk-reads.sh, dontcache-nbd-reads.sh, trace-whole-requests.sh, direct-sparse-writes.sh and
#   disk-inflight.sh output: printed as it is
#   jmh/block-status.sh output: per server, BLOCK_STATUS seconds, descriptors, RSS and nbdcopy seconds
#   compare-tls.sh jit.csv: the TLS server's CPU and its JIT compilers' part; jmh/checksum.sh output: as it is
#   jmh/extended-headers.sh output: per client row, median (min-max) seconds and BLOCK_STATUS requests per run
#   jmh/sparse-open.sh output: per run kind, each run's seconds and the largest max RSS, then the system calls
#   jmh/lucene-merge.sh output (RESULT lines): its tables and PagewiseDirectory's goals (lucene-merge.sh -S)
#   jmh/dontcache-writes.sh results.csv (round,variant,writers,request,...) and its log: medians per request size,
#                                       writer count and variant (dontcache-writes.sh -S)
#   jmh/opensearch-merge.sh output (RESULT lines): its table and per-round ratios (opensearch-merge.sh -S)
# copy.csv rows also get target C3: file-file pagewise copy at most 0.7x nbdcopy.
# Rules: "paired" is the median over rounds of row / reference timed in the same round. A time target is met
# only when both the ratio of the medians and the median paired ratio are <= 1.00; a residency target only when
# every run left <= 1 % of the file cached. Reference rows for the server tables: READ_REF (default nbdkit) and
# WRITE_REF (default nbdkit-none).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: jmh/summarize.sh FILE..." >&2; exit 2; }
SUMMARIZE_JMH=$(cd "$(dirname "$0")" && pwd) python3 - "${READ_REF:-nbdkit}" "${WRITE_REF:-nbdkit-none}" "$@" <<'PY'
import csv, json, re, statistics, sys

read_ref, write_ref, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
median = statistics.median


def table(caption, columns):
    """Prints caption as a paragraph of its own, then the head of a Markdown table of columns ("a | b | c")."""
    print(f"\n{caption}")
    print(f"| {columns} |")
    print("|" + "---|" * len(columns.split(" | ")))


def verdict(ok):
    return "**met**" if ok else "**not met**"


def servers(path, rows):
    refs = {"read": read_ref, "write": write_ref}
    runs = {}
    for r in rows:
        runs.setdefault((r["test"], r["config"]), []).append(r)

    def times(test, config):
        return [float(r["seconds"]) for r in runs.get((test, config), [])]

    def by_round(test, config):
        return {r["round"]: float(r["seconds"]) for r in runs.get((test, config), [])}

    def paired(test, config, ref):
        mine, theirs = by_round(test, config), by_round(test, ref)
        ratios = [mine[k] / theirs[k] for k in mine if k in theirs]
        return median(ratios) if ratios else None

    def resident(test, config):
        return [float(r["resident_percent"]) for r in runs.get((test, config), [])]

    rounds = len({r["round"] for r in rows})
    for test in ("read", "write"):
        configs = sorted({c for t, c in runs if t == test})
        if not configs:
            continue
        # A run without the reference row is paired against the first peer it has.
        ref = next((c for c in (refs[test], "qemu-none", "nbdkit-none") if c in configs), configs[0])
        table(f"{path}: {test}s, {rounds} rounds (paired ratio against {ref})",
              "server and options | median s | min s | max s | left resident | paired")
        for config in configs:
            p = paired(test, config, ref)
            print(f"| {config} | {median(times(test, config)):.2f} | {min(times(test, config)):.2f} "
                  f"| {max(times(test, config)):.2f} "
                  f"| {median(resident(test, config)):.2f} % | {'n/a' if p is None else f'{p:.2f}'} |")

    def compare(label, test, config, peer, residency):
        if not times(test, config) or not times(test, peer):
            print(f"| {label} | rows {config} or {peer} missing | |")
            return
        ratio = median(times(test, config)) / median(times(test, peer))
        pair = paired(test, config, peer)
        ok = ratio <= 1.0 and pair <= 1.0
        text = (f"{median(times(test, config)):.2f} s vs {median(times(test, peer)):.2f} s ({peer}) → {ratio:.3f}×; "
                f"paired {pair:.3f}×")
        if residency:
            most = max(resident(test, config))
            ok = ok and most <= 1.0
            text = f"at most {most:.2f} % left; " + text
        print(f"| {label} | {text} | {verdict(ok)} |")

    # Peers are NBD servers: fio alone (the disk's limit) is compared with below, not raced against.
    peers = [c for t, c in runs if t == "read" and not c.startswith(("pagewise-", "fio-"))]
    fastest = min(peers, key=lambda c: median(times("read", c))) if peers else "a peer"
    table(f"{path}: targets (a time is met only when ratio of medians and paired median are both <= 1)",
          "target | measured | verdict")
    compare("R1 evict reads: ≤ 1 % left, time ≤ fastest peer", "read", "pagewise-evict", fastest, True)
    compare("R1 dontcache reads", "read", "pagewise-dontcache", fastest, True)
    compare("R2 writeback reads ≤ nbdkit default", "read", "pagewise-writeback", "nbdkit", False)
    compare("W1 evict writes: ≤ 1 % left, ≤ nbdkit cache=none", "write", "pagewise-evict", "nbdkit-none", True)
    compare("W1 dontcache writes", "write", "pagewise-dontcache", "nbdkit-none", True)
    compare("D1 direct reads ≤ qemu-nbd none", "read", "pagewise-direct", "qemu-none", False)
    compare("D1 direct writes ≤ qemu-nbd none", "write", "pagewise-direct", "qemu-none", False)

    # C1: every clean mode at or below the best peer of its kind, leaving <= 1 % cached.
    # nbdkit cache=none runs with and without fadvise=random; the faster configuration by median is the peer.
    read_peers = [c for c in ("nbdkit-none", "nbdkit-none-random", "qemu-none") if times("read", c)]
    write_peers = [c for c in ("nbdkit-none", "nbdkit-none-random") if times("write", c)]
    if read_peers or write_peers:
        best = min(read_peers, key=lambda c: median(times("read", c))) if read_peers else None
        best_write = min(write_peers, key=lambda c: median(times("write", c))) if write_peers else None
        table(f"{path}: issue 12 target C1, clean modes vs the best peer of their kind "
              f"(reads: {best or 'not run'}, the fastest of nbdkit-none, nbdkit-none-random and qemu-none by median; "
              f"writes: {best_write or 'not run'}, the faster nbdkit cache=none)",
              "target | measured | verdict")
        for mode in ("evict", "dontcache", "direct") if best else ():
            compare(f"C1 {mode} reads", "read", f"pagewise-{mode}", best, True)
        for mode in ("evict", "dontcache", "direct") if best_write else ():
            compare(f"C1 {mode} writes", "write", f"pagewise-{mode}", best_write, True)

    # DONTCACHE writes against nbdkit cache=none, the bookworm one and the newest (1.42).
    for peer in ("nbdkit-none", "nbdkit142-none"):
        if times("write", "pagewise-dontcache") and times("write", peer):
            table(f"{path}: issue 24 target 2, dontcache writes at or below {peer}",
                  "target | measured | verdict")
            compare(f"dontcache writes ≤ {peer}", "write", "pagewise-dontcache", peer, True)

    # Clean modes against the disk's own limit, the faster of fio-direct and fio-buffered by median, in the same run.
    def within(label, test, config, limit_config, limit):
        if not times(test, config):
            print(f"| {label} | row {config} missing | |")
            return
        ratio = median(times(test, config)) / median(times(test, limit_config))
        pair = paired(test, config, limit_config)
        print(f"| {label} | {median(times(test, config)):.2f} s vs {median(times(test, limit_config)):.2f} s "
              f"({limit_config}) → {ratio:.3f}×; paired {pair:.3f}× | {verdict(ratio <= limit and pair <= limit)} |")

    for test in ("read", "write"):
        disk = [c for c in ("fio-direct", "fio-buffered") if times(test, c)]
        if not disk:
            continue
        limit_config = min(disk, key=lambda c: median(times(test, c)))
        table(f"{path}: issue 24 target 5, {test}s as a ratio to the disk's limit ({limit_config}, the faster "
              f"fio run by median; a time is met when the ratio of medians and the paired median are both within)",
              "target | measured | verdict")
        for mode in ("evict", "dontcache", "direct"):
            limit = 1.2 if (test, mode) == ("read", "direct") else 1.1
            within(f"{mode} {test}s ≤ {limit}× disk", test, f"pagewise-{mode}", limit_config, limit)

    # DIRECT reads against O_DIRECT reads with no NBD in between, and against qemu-nbd's (D1 above), at 1.0×.
    if times("read", "pagewise-direct") and times("read", "fio-direct"):
        table(f"{path}: issue 40 item 3, direct reads at or below fio's O_DIRECT reads (a time is met when the "
              "ratio of medians and the paired median are both within)", "target | measured | verdict")
        within("direct reads ≤ 1.0× fio-direct", "read", "pagewise-direct", "fio-direct", 1.0)


def copies(path, rows):
    tests = []
    for r in rows:
        if (r["test"], r["server"]) not in tests:
            tests.append((r["test"], r["server"]))
    rounds = len({r["round"] for r in rows})
    print(f"\n{path}: pagewise copy vs nbdcopy, {rounds} rounds; residency after the run, median, pagewise / nbdcopy "
          "(- : the file an NBD server holds)")
    print("| test | pagewise median s | nbdcopy median s | paired ratio | destination resident | source resident "
          "| pagewise ≤ nbdcopy (both medians), its files ≤ 1 % every run |")
    print("|---|---|---|---|---|---|---|")
    c3 = []
    for test, server in tests:
        runs = {tool: [r for r in rows if r["test"] == test and r["server"] == server and r["tool"] == tool]
                for tool in ("pagewise", "nbdcopy")}
        secs = {tool: {r["round"]: float(r["seconds"]) for r in runs[tool]} for tool in runs}
        ratios = [secs["pagewise"][k] / secs["nbdcopy"][k] for k in secs["pagewise"] if k in secs["nbdcopy"]]
        mp, mn = median(secs["pagewise"].values()), median(secs["nbdcopy"].values())

        def res(column):
            values = ["-" if any(r[column] == "-" for r in runs[tool])
                      else f"{median(float(r[column]) for r in runs[tool]):.2f} %" for tool in runs]
            return " / ".join(values)
        clean = all(r[c] == "-" or float(r[c]) <= 1.0 for r in runs["pagewise"] for c in ("dst_resident", "src_resident"))
        ok = mp / mn <= 1.0 and median(ratios) <= 1.0 and clean
        label = test if server == "none" else f"{test} ({server})"
        print(f"| {label} | {mp:.2f} | {mn:.2f} | {median(ratios):.2f} | {res('dst_resident')} "
              f"| {res('src_resident')} | {verdict(ok)} |")
        if test == "file-file":
            c3.append((label, mp / mn, median(ratios), clean))
    for label, ratio, pair, clean in c3:
        print(f"C3 (issue 12) {label}: pagewise copy ≤ 0.7× nbdcopy: {ratio:.3f}× by medians, paired {pair:.3f}×; "
              f"{verdict(ratio <= 0.7 and pair <= 0.7 and clean)}")


def cache_modes(path, rows):
    table(f"{path}: median of the measured passes (the first row of each mode and op is the warm-up)",
          "mode | read s (min) | read MiB/s | read left cached | write s (min) | write MiB/s | write left cached")
    modes = []
    for r in rows:
        if r["mode"] not in modes:
            modes.append(r["mode"])
    for mode in modes:
        cells = []
        for op in ("read", "write"):
            measured = [r for r in rows if r["mode"] == mode and r["op"] == op][1:]
            secs = [float(r["seconds"]) for r in measured]
            mid = median(secs)
            cells += [f"{mid:.2f} ({min(secs):.2f})", f"{float(measured[0]['sizeMiB']) / mid:.0f}",
                      f"{median(float(r['residentPercent']) for r in measured):.2f} %"]
        print(f"| {mode} | " + " | ".join(cells) + " |")


def positional_io(path, text):
    scores = {}
    for m in re.finditer(r"^PositionalIoBenchmark\.(\w+)\s+(\w+)\s+(\d+)\s+thrpt\s+\d+\s+([\d.]+)\s+±\s+([\d.]+)",
                         text, re.M):
        op, api, size, score, error = m.groups()
        scores[(op, int(size), api)] = (float(score), float(error))
    table(f"{path}: J1, JNI positional I/O vs FileChannel (JMH score: mean ops/s ± 99.9 % error)",
          "op | size | pagewise ops/s | FileChannel ops/s | ratio | error intervals")
    all_ok = True
    for op in ("read", "write"):
        for size in sorted({s for o, s, a in scores if o == op}):
            (p, pe), (f, fe) = scores[(op, size, "pagewise")], scores[(op, size, "filechannel")]
            all_ok = all_ok and p >= f
            overlap = "overlap" if p - pe <= f + fe and f - fe <= p + pe else "apart"
            label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
            print(f"| {op} | {label} | {p:,.0f} ± {pe:,.0f} | {f:,.0f} ± {fe:,.0f} | {p / f:.2f} | {overlap} |")
    print(f"J1 JNI ≥ FileChannel at every size (by JMH's score): {verdict(all_ok)}")


def ffm_vs_jni(path, text):
    scores = {}
    for m in re.finditer(r"^FfmVsJniReadBenchmark\.(\w+)\s+(true|false)\s+(\d+)\s+avgt\s+\d+\s+([\d.]+)\s+±\s+([\d.]+)",
                         text, re.M):
        api, direct, size, score, error = m.groups()
        scores[(direct == "true", int(size), api)] = (float(score), float(error))
    print(f"\n{path}: issue 20, one read through the library's JNI call vs FFM (JMH score: mean ns/op ± 99.9 % error)")
    print("| file | size | JNI ns/op | FFM pread ns/op | FFM preadv ns/op | FileChannel.read ns/op | StorageFile.read ns/op "
          "| pread / JNI | preadv / JNI | error intervals (pread, preadv vs JNI) |")
    print("|---|---|---|---|---|---|---|---|---|---|")

    def overlap(a, b):
        return "overlap" if a[0] - a[1] <= b[0] + b[1] and b[0] - b[1] <= a[0] + a[1] else "apart"

    for direct, size in sorted({(d, s) for d, s, a in scores}):
        jni, pread, preadv, channel, storage = (scores.get((direct, size, a))
                                                for a in ("jni", "ffmPread", "ffmPreadv", "fileChannel", "storageFile"))
        if not (jni and pread and preadv):
            continue
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        cell = lambda v: f"{v[0]:,.0f} ± {v[1]:,.0f}" if v else "-"
        print(f"| {'O_DIRECT' if direct else 'cached'} | {label} | {cell(jni)} | {cell(pread)} | {cell(preadv)} "
              f"| {cell(channel)} | {cell(storage)} | {pread[0] / jni[0]:.2f} | {preadv[0] / jni[0]:.2f} "
              f"| {overlap(pread, jni)}, {overlap(preadv, jni)} |")


def ffm_rounds(path, rows):
    score = {}
    for r in rows:
        score.setdefault((int(r["size"]), r["method"]), {})[r["round"]] = float(r["score_ns"])
    loads = [float(r["load1"]) for r in rows]
    rounds = len({r["round"] for r in rows})
    # NAME@ffm: NAME with the library's own FFM classes on (ffm-vs-jni-rounds.sh).
    order = ["jni", "ffmPread", "ffmPreadv", "fileChannel", "storageFile", "jni@ffm", "storageFile@ffm"]
    others = [m for m in order[1:] if any(k[1] == m for k in score)]
    print(f"\n{path}: issue 20, JNI vs FFM reads in {rounds} interleaved rounds (one JMH fork per path, size and round; "
          f"load average {min(loads):.1f}–{max(loads):.1f}); median ns/op, and paired: the median over rounds of "
          "path / JNI (min–max)")
    print("| size | jni | " + " | ".join(others) + " | " + " | ".join(f"{m} / jni paired" for m in others)
          + " | FFM ≤ JNI (medians and paired) |")
    print("|---|---|" + "---|" * (2 * len(others)) + "---|")
    for size in sorted({s for s, m in score}):
        if (size, "jni") not in score:
            continue
        jni = score[(size, "jni")]
        medians, pairs_cells, ok = [], [], False
        for m in others:
            mine = score.get((size, m), {})
            pairs = [mine[k] / jni[k] for k in mine if k in jni]
            medians.append(f"{median(mine.values()):,.0f}" if mine else "-")
            pairs_cells.append(f"{median(pairs):.2f} ({min(pairs):.2f}–{max(pairs):.2f})" if pairs else "-")
            if (m.startswith("ffm") or m.endswith("@ffm")) and pairs:
                ok = ok or (median(mine.values()) <= median(jni.values()) and median(pairs) <= 1)
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        print(f"| {label} | {median(jni.values()):,.0f} | " + " | ".join(medians) + " | " + " | ".join(pairs_cells)
              + f" | {verdict(ok)} |")


def positional_rounds(path, rows):
    score = {}
    for r in rows:
        key = (int(r["threads"]), r["op"], r["buffer"])
        score.setdefault(key, {}).setdefault(r["api"], {})[r["round"]] = float(r["ops_per_s"])
    loads = [float(r["load1"]) for r in rows]
    rounds = len({r["round"] for r in rows})
    table(f"{path}: issue 24, StorageFile against FileChannel in {rounds} interleaved rounds (one JMH fork per "
          f"case, API and round; load average {min(loads):.1f}–{max(loads):.1f}); median ops/s, and paired: the "
          "median over rounds of pagewise / FileChannel (min–max)",
          "threads | op | buffer | pagewise ops/s | FileChannel ops/s | pagewise / FileChannel paired | at least as fast (paired median ≥ 1.00)")
    for key in sorted(score):
        mine, theirs = score[key].get("pagewise", {}), score[key].get("filechannel", {})
        pairs = [mine[k] / theirs[k] for k in mine if k in theirs]
        if not pairs:
            continue
        print(f"| {key[0]} | {key[1]} | {key[2]} | {median(mine.values()):,.0f} | {median(theirs.values()):,.0f} "
              f"| {median(pairs):.2f} ({min(pairs):.2f}–{max(pairs):.2f}) | {verdict(median(pairs) >= 1.0)} |")


COMPARED = {
    "WRITEBACK": "like for like: both buffered",
    "UNSAFE": "like for like: both buffered",
    "DIRECT": "like for like: both O_DIRECT",
    "EVICT": "no counterpart: against buffered",
    "DONTCACHE": "no counterpart: against buffered",
}


def paired_json(path, results):
    """PairedPositionalIoBenchmark's JMH JSON: both APIs timed call by call in the same iterations; an iteration's
    speed ratio pagewise / FileChannel is fileChannelNanos / pagewiseNanos. Each case ran with each API on either
    file (swapFiles); the ratio is the geometric mean of the two assignments' medians, in which a file's own speed
    cancels."""
    table(f"{path}: issue 24, StorageFile against FileChannel, paired call by call in one JVM "
          "(PairedPositionalIoBenchmark); µs per call: median over iterations, both file assignments; by file: the "
          "median ratio (FileChannel time / pagewise time) with pagewise on the file made first, then on the "
          "second; ratio: their geometric mean",
          "threads | op | buffer | mode | size | pagewise µs/call | FileChannel µs/call | by file | ratio | at least as fast (ratio ≥ 1.00)")
    order = {m: i for i, m in enumerate(COMPARED)}
    cases = {}
    for r in results:
        method = r["benchmark"].rsplit(".", 1)[1]
        p = r["params"]
        seconds = float(r["measurementTime"].split()[0])
        mine = [x for f in r["secondaryMetrics"]["pagewiseNanos"]["rawData"] for x in f]
        theirs = [x for f in r["secondaryMetrics"]["fileChannelNanos"]["rawData"] for x in f]
        calls = [o * seconds for f in r["primaryMetric"]["rawData"] for o in f]
        key = (r["threads"], method.rstrip("4"), p["buffer"], order.get(p["mode"], 99), p["mode"], int(p["size"]))
        c = cases.setdefault(key, {"mine": [], "theirs": [], "by": {}})
        c["mine"] += [m / n / 1000 for m, n in zip(mine, calls)]
        c["theirs"] += [t / n / 1000 for t, n in zip(theirs, calls)]
        c["by"][p.get("swapFiles", "false")] = median([t / m for m, t in zip(mine, theirs)])
    met = []
    for key in sorted(cases):
        c = cases[key]
        by = [c["by"][k] for k in sorted(c["by"])]
        ratio = statistics.geometric_mean(by)
        ok = ratio >= 1.0
        met.append(ok)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[4]} | {key[5]} | {median(c['mine']):.2f} "
              f"| {median(c['theirs']):.2f} | {' / '.join(f'{b:.3f}' for b in by)} | {ratio:.3f} | {verdict(ok)} |")
    print(f"cases met: {sum(met)} of {len(met)}")


def positional_json(path, results):
    """PositionalIoBenchmark's JMH JSON (-rf json): every measured iteration of every fork, pagewise and FileChannel
    of each case run back to back (the parameter via is last in JMH's order)."""
    cases = {}
    for r in results:
        method = r["benchmark"].rsplit(".", 1)[1]
        p = r["params"]
        op = method.rstrip("4")
        key = (r["threads"], op, p["buffer"], p["mode"], int(p["size"]))
        forks = r["primaryMetric"]["rawData"]
        cases.setdefault(key, {}).setdefault(p["via"], []).extend(forks)
    sizes = sorted({k[4] for k in cases})
    table(f"{path}: issue 24, StorageFile against FileChannel at {', '.join(str(s) for s in sizes)} bytes; median "
          "ops/s over every measured iteration of every fork; ratio = pagewise median / FileChannel median; per fork: "
          "the pagewise / FileChannel ratio of the forks' means, fork by fork (min–max)",
          "threads | op | buffer | mode | compared | pagewise ops/s | FileChannel ops/s | ratio | per fork | at least as fast (ratio ≥ 1.00)")
    order = {m: i for i, m in enumerate(COMPARED)}
    met = {}
    for key in sorted(cases, key=lambda k: (k[0], k[1], k[2], order.get(k[3], 99), k[4])):
        both = cases[key]
        if "pagewise" not in both or "filechannel" not in both:
            continue
        mine, theirs = both["pagewise"], both["filechannel"]
        m = median([x for fork in mine for x in fork])
        t = median([x for fork in theirs for x in fork])
        forks = [statistics.mean(a) / statistics.mean(b) for a, b in zip(mine, theirs)]
        ok = m >= t
        met[key] = ok
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {COMPARED.get(key[3], '')} | {m:,.0f} | {t:,.0f} "
              f"| {m / t:.2f} | {min(forks):.2f}–{max(forks):.2f} | {verdict(ok)} |")
    alike = [ok for k, ok in met.items() if COMPARED.get(k[3], "").startswith("like")]
    print(f"like-for-like cases met: {sum(alike)} of {len(alike)}; all cases met: {sum(met.values())} of {len(met)}")


def server_cpu(path, text):
    rows = [line.split() for line in text.splitlines() if re.match(r"^\d+ (read|write) \S+ [\d.]+ [\d.]+ [\d.]+", line)]
    size = re.search(r"(\d+) bytes", text)
    gib = int(size.group(1)) / (1 << 30) if size else None
    per = "per GiB" if gib else "per run (the file size is not in the output)"
    cpu = {}
    for r in rows:
        cpu.setdefault((r[1], r[2]), {})[r[0]] = (float(r[4]) + float(r[5])) / (gib or 1)
    table(f"{path}: the server's CPU seconds (user + system) {per}, median over rounds",
          "test | config | wall s | CPU s | paired CPU ratio to nbdkit-none")
    for (test, config), by_round in sorted(cpu.items()):
        wall = median(float(r[3]) for r in rows if r[1] == test and r[2] == config)
        ref = cpu.get((test, "nbdkit-none"), {})
        ratios = [by_round[k] / ref[k] for k in by_round if k in ref and ref[k] > 0]
        print(f"| {test} | {config} | {wall:.2f} | {median(by_round.values()):.2f} "
              f"| {f'{median(ratios):.2f}' if ratios else 'n/a'} |")
    for test in ("read", "write"):
        mine, theirs = cpu.get((test, "pagewise-evict")), cpu.get((test, "nbdkit-none"))
        if not mine or not theirs:
            continue
        ratio = median(mine.values()) / median(theirs.values())
        pair = median(mine[k] / theirs[k] for k in mine if k in theirs)
        print(f"C2 (issue 12) evict {test}s, server CPU ≤ nbdkit-none's: {median(mine.values()):.3f} s vs "
              f"{median(theirs.values()):.3f} s {per} → {ratio:.4f}×, paired {pair:.4f}×; {verdict(ratio <= 1 and pair <= 1)}")
        if test == "write":
            print(f"issue 24 target 6, evict writes, server CPU ≤ 0.8× nbdkit-none's: {ratio:.4f}×, paired {pair:.4f}×; "
                  f"{verdict(ratio <= 0.8 and pair <= 0.8)}")


def memory(path, text):
    peaks = [int(kb) for kb in re.findall(r"VmHWM:\s+(\d+) kB", text)]
    peak = median(peaks)
    print(f"\n{path}: M1 server peak RSS (VmHWM), median of {len(peaks)} runs: {peak / 1024:.0f} MiB "
          f"(runs: {', '.join(f'{p / 1024:.0f}' for p in peaks)} MiB), target ≤ 256 MiB: {verdict(peak <= 256 * 1024)}")


tls_rows = []


def tls(path, rows):
    """One row per results file of jmh/compare-tls.sh; the table is printed after all files."""
    by = {}
    for r in rows:
        by.setdefault(r["config"], {})[r["round"]] = float(r["seconds"])
    first = rows[0]
    warm, pause = int(first["warm_reads"]), first["pause_s"]
    nth = {0: "first", 1: "second", 2: "third"}.get(warm, f"{warm + 1}th")
    when = f"the server's {nth}" + (f" (`-w {warm}`)" if warm else "") + \
        (", at once after it listens (`-p 0`)" if pause == "0" else f", {pause} s after it listens")
    for config in sorted(c for c in by if c != "nbdkit"):
        mine, theirs = median(by[config].values()), median(by["nbdkit"].values())
        pairs = [by[config][k] / by["nbdkit"][k] for k in by["nbdkit"] if k in by[config]]
        label = when if config == "pagewise" else f"{when}, {config}"
        tls_rows.append((path, first["size"], len(pairs), label, mine, theirs, median(pairs), min(pairs), max(pairs)))


def print_tls():
    if not tls_rows:
        return
    print("\nTLS (issue 13): nbdcopy read over TLS, pagewise serve --tls=require vs nbdkit --tls=require, target ≤ 1.2×")
    print("\n| file | size | rounds | timed read | pagewise median s | nbdkit median s | ratio of medians | paired (min–max) | ≤ 1.2× |")
    print("|---|---|---|---|---|---|---|---|---|")
    for path, size, rounds, when, mine, theirs, pair, lo, hi in tls_rows:
        ratio = mine / theirs
        print(f"| {path.split('/')[-1]} | {size} | {rounds} | {when} | {mine:.3f} | {theirs:.3f} | {ratio:.3f} "
              f"| {pair:.3f} ({lo:.3f}–{hi:.3f}) | {verdict(ratio <= 1.2 and pair <= 1.2)} |")


def block_status(path, text):
    # jmh/block-status.sh: per server, the median over rounds of the slowest of 8 concurrent whole-export
    # BLOCK_STATUS requests, the descriptors of one reply, the largest peak RSS, and nbdcopy's seconds with the
    # median paired ratio to nbdkit's in the same round.
    status, copy, order = {}, {}, []
    for line in text.splitlines():
        m = re.match(r"(\S+) status slowest_s=(\S+) mean_s=\S+ descriptors=(\d+) rss_mib=(\d+)->(\d+)", line)
        if m:
            name = m.group(1)
            if name not in order:
                order.append(name)
            status.setdefault(name, []).append((float(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))))
        m = re.match(r"(\S+) nbdcopy seconds=(\S+)", line)
        if m:
            copy.setdefault(m.group(1), []).append(float(m.group(2)))
    header = next((line for line in text.splitlines() if line.startswith("# ")), "")
    print(f"\n{path}: BLOCK_STATUS and nbdcopy on a file of alternating 4 KiB runs (jmh/block-status.sh)\n{header}")
    print("\n| server | rounds | slowest of 8 BLOCK_STATUS, median s | descriptors per reply | RSS before → largest peak, MiB "
          "| nbdcopy median s | nbdcopy paired ÷ nbdkit |")
    print("|---|---|---|---|---|---|---|")
    for name in order:
        rows = status[name]
        times = copy.get(name, [])
        ref = copy.get("nbdkit", [])
        pair = (f"{median([a / b for a, b in zip(times, ref)]):.2f}" if ref and len(ref) == len(times) else "—")
        print(f"| {name} | {len(rows)} | {median(r[0] for r in rows):.3f} | {rows[0][1]} "
              f"| {rows[0][2]} → {max(r[3] for r in rows)} | {median(times):.2f} | {pair} |")


def runs_by_label(path, text):
    """jmh/extended-headers.sh output: per client row, its run times and BLOCK_STATUS requests per run."""
    times, requests = {}, {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"(.+?): BLOCK_STATUS requests per run: (\d+)/(\d+)$", line)
        if m:
            requests[m.group(1)] = int(m.group(2)) / int(m.group(3))
            continue
        m = re.match(r"(.+?)\s+([\d.]+) s$", line)
        if m:
            times.setdefault(m.group(1), []).append(float(m.group(2)))
    print(f"\n{path}: wall seconds per run, median (min–max), and the BLOCK_STATUS requests one run sent")
    print("| run | runs | median s (min–max) | BLOCK_STATUS requests per run |\n|---|---|---|---|")
    for label, t in times.items():
        count = f"{requests[label]:,.0f}" if label in requests else "(not counted)"
        print(f"| {label} | {len(t)} | {median(t):.2f} ({min(t):.2f}–{max(t):.2f}) | {count} |")


def sparse_open(path, text):
    """jmh/sparse-open.sh output: per run kind, the seconds of each run and the largest max RSS; system calls as they are."""
    runs = {}
    for m in re.finditer(r"^(\S+)\s+([\d.]+) s\s+(\d+) KiB max RSS$", text, re.M):
        runs.setdefault(m.group(1), []).append((float(m.group(2)), int(m.group(3))))
    print(f"\n{path}: seconds of each run in order, and the largest max RSS (jmh/sparse-open.sh)")
    print("| run | seconds | largest max RSS |\n|---|---|---|")
    for name, rs in runs.items():
        print(f"| {name} | {' / '.join(f'{s:.2f}' for s, _ in rs)} | {max(r for _, r in rs) / 1024:.1f} MiB |")
    calls = text.split("# system calls", 1)
    if len(calls) == 2:
        print("system calls" + calls[1].rstrip())


pooled = []
pooled_servers = []
for path in paths:
    if path.endswith(".md"):
        continue  # the write-ups beside the raw results (docs/bench/LOG.md), which quote their tables
    with open(path) as f:
        text = f.read()
    header = text.splitlines()[0] if text else ""
    if header.startswith("round,test,config,"):
        rows = list(csv.DictReader(text.splitlines()))
        servers(path, rows)
        # Rounds stay paired within their own run: "file k, round n".
        pooled_servers.append((path, [dict(r, round=f"{len(pooled_servers)}:{r['round']}") for r in rows]))
    elif header.startswith("round,test,server,tool,"):
        copies(path, list(csv.DictReader(text.splitlines())))
    elif header.startswith("round,size,pause_s,warm_reads,config,seconds"):
        tls(path, list(csv.DictReader(text.splitlines())))
    elif header.startswith(("round,server_cpu_s,jit_cpu_s", "round,config,server_cpu_s,jit_cpu_s")):
        # Files before the config column are of the server named pagewise alone.
        by_config = {}
        for r in csv.DictReader(text.splitlines()):
            by_config.setdefault(r.get("config", "pagewise"), []).append(r)
        for config, rows in sorted(by_config.items()):
            cpu = median(float(r["server_cpu_s"]) for r in rows)
            jit = median(float(r["jit_cpu_s"]) for r in rows)
            print(f"\n{path}: the {config} TLS server's CPU from its start to the end of the timed read, median of "
                  f"{len(rows)}: {cpu:.2f} s, of which its JIT compiler threads {jit:.2f} s ({jit / cpu * 100:.0f} %)")
    elif "median ratio pagewise / blksum" in text:
        print(f"\n{path}: pagewise checksum against blksum (jmh/checksum.sh)\n{text.rstrip()}")
    elif header.startswith("round,size,method,load1,"):
        ffm_rounds(path, list(csv.DictReader(text.splitlines())))
    elif header.startswith("round,threads,op,buffer,api,"):
        positional_rounds(path, list(csv.DictReader(text.splitlines())))
    elif header.startswith("mode,op,sizeMiB,"):
        cache_modes(path, list(csv.DictReader(text.splitlines())))
    elif text.lstrip().startswith("[") and "PairedPositionalIoBenchmark." in text:
        paired_json(path, json.loads(text))
    elif text.lstrip().startswith("[") and "PositionalIoBenchmark." in text:
        positional_json(path, json.loads(text))
        pooled.append((path, json.loads(text)))
    elif "FfmVsJniReadBenchmark." in text:
        ffm_vs_jni(path, text)
    elif "PositionalIoBenchmark." in text:
        positional_io(path, text)
    elif header.startswith("round test config wall_s") or "\nround test config wall_s" in text:
        server_cpu(path, text)
    elif "VmHWM:" in text:
        memory(path, text)
    elif "request_size" in text:
        print(f"\n{path}: disk bytes read / file bytes with RWF_DONTCACHE\n{text.rstrip()}")
    elif "calls  syscall  flags  bytes" in text:
        print(f"\n{path}: system calls on the served file per NBD request (jmh/trace-whole-requests.sh)\n{text.rstrip()}")
    elif "\nround config seconds write_requests" in text:
        print(f"\n{path}: writes in flight at the disk while nbdcopy writes a sparse file (jmh/disk-inflight.sh)\n{text.rstrip()}")
    elif "\nround case seconds" in text:
        print(f"\n{path}: O_DIRECT writes into a sparse file from many threads (jmh/direct-sparse-writes.sh)\n{text.rstrip()}")
    elif re.search(r"^\S+ status slowest_s=", text, re.M):
        block_status(path, text)
    elif re.search(r"^run\s+seconds\s+max RSS$", text, re.M):
        sparse_open(path, text)
    elif re.search(r": BLOCK_STATUS requests per run: \d+/\d+$", text, re.M):
        runs_by_label(path, text)
    elif re.search(r"^RESULT mode=\S+ round=", text, re.M):
        print(f"\n{path}: a Lucene merge beside a searched and an idle index (jmh/lucene-merge.sh)", flush=True)
        import os, subprocess
        subprocess.run(["bash", os.path.join(os.environ["SUMMARIZE_JMH"], "lucene-merge.sh"), "-S", path], check=True)
    elif re.search(r"^RESULT round=\S+ load1=\S+ failcnt=\S+ store=", text, re.M):
        print(f"\n{path}: OpenSearch search beside a force-merge and a shard moving in (jmh/opensearch-merge.sh)", flush=True)
        import os, subprocess
        subprocess.run(["bash", os.path.join(os.environ["SUMMARIZE_JMH"], "opensearch-merge.sh"), "-S", path], check=True)
    elif header.startswith("round,variant,writers,request,"):
        print(flush=True)
        import os, subprocess
        subprocess.run(["bash", os.path.join(os.environ["SUMMARIZE_JMH"], "dontcache-writes.sh"), "-S", path], check=True)
    elif re.search(r"^round=\S+ variant=\S+ load1=\S+ RESULT mode=", text, re.M):
        lines = [l for l in text.splitlines() if l.startswith("# ") or l.startswith("|")]
        print(f"\n{path}: heavy writes, DONTCACHE against EVICT (jmh/dontcache-writes.sh; each run in the .csv beside it)")
        print("\n".join(lines))
    elif "disk_read/file server_cpu_s" in text:
        print(f"\n{path}: DONTCACHE reads over NBD, RWF_DONTCACHE on whole windows or on every read\n{text.rstrip()}")
    else:
        print(f"\n{path}: not a results file summarize.sh knows", file=sys.stderr)
print_tls()
if len(pooled_servers) > 1 and len({frozenset((r["test"], r["config"]) for r in rs) for _, rs in pooled_servers}) == 1:
    # Runs of the same tests and configs, every round together, each paired within its own run and round.
    servers("pooled: " + " + ".join(p for p, _ in pooled_servers), [r for _, rs in pooled_servers for r in rs])
if len(pooled) > 1:
    # The same cases from several runs, their forks together (fork k of one API against fork k of the other).
    positional_json("pooled: " + " + ".join(p for p, _ in pooled), [r for _, rs in pooled for r in rs])
PY
