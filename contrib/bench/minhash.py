# minhash.py - a plain Python near-duplicate pass, the reference for
# owt-dedup's near stage in contrib/bench/owt-dedup.sh: word 5-grams of
# re.findall(r"\w+", text.lower()), 128 MinHash permutations done as
# datasketch's update_batch does them (numpy, (a*h + b) mod 2^61-1), LSH
# with 10 bands of 4 rows, keep the first of each cluster (estimated
# Jaccard >= 0.7 against a kept candidate). Writes the kept lines.
# Run by /usr/bin/python3 (Debian's python3-numpy).
import json
import re
import sys
import zlib

import numpy as np

K, BANDS, ROWS, THRESHOLD = 128, 10, 4, 0.7
P = (1 << 61) - 1
rng = np.random.RandomState(1)
A = rng.randint(1, P, size=K, dtype=np.uint64)
B = rng.randint(0, P, size=K, dtype=np.uint64)
buckets = [dict() for _ in range(BANDS)]
kept = []
out = open(sys.argv[2], "w", encoding="utf-8")
for line in open(sys.argv[1], encoding="utf-8"):
    words = re.findall(r"\w+", json.loads(line)["text"].lower())
    grams = {" ".join(words[i:i + 5]) for i in range(max(1, len(words) - 4))}
    if not words:
        out.write(line)
        continue
    hv = np.array([zlib.crc32(g.encode()) for g in grams], dtype=np.uint64)
    sig = ((np.outer(hv, A) + B) % P).min(axis=0)
    cands = set()
    for j in range(BANDS):
        cands.update(buckets[j].get(sig[j * ROWS:(j + 1) * ROWS].tobytes(), ()))
    if any(np.mean(kept[c] == sig) >= THRESHOLD for c in cands):
        continue
    for j in range(BANDS):
        buckets[j].setdefault(sig[j * ROWS:(j + 1) * ROWS].tobytes(), []).append(len(kept))
    kept.append(sig)
    out.write(line)
