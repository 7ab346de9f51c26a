# ld-accuracy.py - is-English accuracy of Debian's python3-langdetect on a
# {"text", "lang"} JSONL set, seeded (DetectorFactory.seed = 0), for
# comparison with owt-dedup's lang stage. Run by /usr/bin/python3.
# Prints: accuracy, seconds, bytes.
import json
import sys
import time

from langdetect import DetectorFactory, detect

DetectorFactory.seed = 0
items = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
start = time.time()
right = 0
for it in items:
    try:
        lang = detect(it["text"])
    except Exception:
        lang = "un"
    right += (lang == "en") == (it["lang"] == "en")
secs = time.time() - start
print("%.4f %.3f %d" % (right / len(items), secs,
                        sum(len(it["text"].encode()) for it in items)))
