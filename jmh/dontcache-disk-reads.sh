#!/usr/bin/env bash
# How much a cold sequential read with RWF_DONTCACHE reads from disk, per request size: one thread reads the
# whole file with preadv2(..., RWF_DONTCACHE) (no pagewise code involved) and the disk's own sector counter
# (/sys/dev/block/MAJOR:MINOR/stat, "sectors read") is read before and after. 1.00x means each byte was read
# from disk once. The file is evicted (fadvise DONTNEED) before every pass. Other reads on the same disk during
# a pass are counted too, so the script prints every pass and the median per size.
#
# Usage: jmh/dontcache-disk-reads.sh [-s SIZE (default 1G)] [-r ROUNDS (default 3)] [-d DIR (default /var/tmp)]
#                                    [-b SIZES (default 64K,256K,1M,2M,4M)]
# Needs: python3, Linux >= 6.14 and a file system that takes RWF_DONTCACHE (ext4 >= 6.17, XFS >= 6.15).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
size=1G rounds=3 dir=/var/tmp sizes=64K,256K,1M,2M,4M
parse_options s=size r=rounds d=dir b=sizes -- "$@"
work=$(mktemp -d "$dir/pagewise-dontcache.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
head -c "$size" /dev/urandom > "$work/data.raw"
sync "$work/data.raw"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), file $(stat -c %s "$work/data.raw") bytes in $dir ($(df --output=fstype "$dir" | tail -1))"
python3 - "$work/data.raw" "$rounds" "$sizes" <<'PY'
import os, statistics, sys
path, rounds, sizes = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
RWF_DONTCACHE = 0x80  # linux/fs.h; Python has no name for it yet
units = {"K": 1 << 10, "M": 1 << 20}
def parse(text):
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)
st = os.stat(path)
stat_file = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}/stat"
if not os.path.exists(stat_file):
    sys.exit(f"dontcache-disk-reads: {path} is not on a block device with {stat_file}")
def sectors_read():
    with open(stat_file) as f:
        return int(f.read().split()[2])
length = st.st_size
ratios = {s: [] for s in sizes}
print("round request_size disk_bytes_read/file_bytes")
for r in range(1, rounds + 1):
    for s in sizes:
        request = parse(s)
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            buffer = bytearray(request)
            before = sectors_read()
            offset = 0
            while offset < length:
                n = os.preadv(fd, [buffer], offset, RWF_DONTCACHE)
                if n <= 0:
                    sys.exit(f"dontcache-disk-reads: short read at {offset}")
                offset += n
            ratio = (sectors_read() - before) * 512 / length
        finally:
            os.close(fd)
        ratios[s].append(ratio)
        print(f"{r} {s} {ratio:.2f}", flush=True)
print("\nmedian per request size")
for s in sizes:
    print(f"{s} {statistics.median(ratios[s]):.2f}x")
PY
