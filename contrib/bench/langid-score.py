# langid-score.py - language ID accuracy of owt-dedup's lang stage beside
# Debian's python3-langdetect (seeded: DetectorFactory.seed = 0), by text
# length, on a {"text", "lang"} JSONL set (langid-dev.jsonl, or the
# held-out set of langid-heldout.py).
#
#   langid-score.py SET.jsonl REPORT.jsonl [NAME]
#
# REPORT is owt-dedup --stages lang --report's output on SET: a line it
# drops names the language it found; a line it keeps is English. Prints
# is-English accuracy and language accuracy (every language; for owt-dedup
# only the dropped lines name one, so this counts a kept line as "en") per
# length bucket in code points, for both detectors, then their errors.
# Run by /usr/bin/python3.
import json
import sys
import time

from langdetect import DetectorFactory, detect

DetectorFactory.seed = 0
BUCKETS = [(20, 49), (50, 199), (200, 499), (500, 2000)]


def bucket(n):
    for lo, hi in BUCKETS:
        if n <= hi:
            return "%d-%d" % (lo, hi)
    return "%d-%d" % BUCKETS[-1]


def main():
    items = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
    name = sys.argv[3] if len(sys.argv) > 3 else sys.argv[1]
    owt = ["en"] * len(items)
    for line in open(sys.argv[2], encoding="utf-8"):
        r = json.loads(line)
        if r.get("stage") == "lang":
            owt[r["line"] - 1] = r.get("lang", "un")
    ld = []
    start = time.time()
    for it in items:
        try:
            code = detect(it["text"])
        except Exception:
            code = "un"
        ld.append("zh" if code.startswith("zh") else code)
    secs = time.time() - start
    rows = {}
    for it, o, l in zip(items, owt, ld):
        for b in (bucket(len(it["text"])), "all"):
            r = rows.setdefault(b, [0, 0, 0, 0, 0])
            en = it["lang"] == "en"
            r[0] += 1
            r[1] += (o == "en") == en
            r[2] += (l == "en") == en
            r[3] += o == it["lang"]
            r[4] += l == it["lang"]
    print("%s: %d texts, langdetect %.1f s" % (name, len(items), secs))
    print("  chars      n    is-English: owt-dedup langdetect   language: owt-dedup langdetect")
    for b in ["%d-%d" % x for x in BUCKETS] + ["all"]:
        if b not in rows:
            continue
        n, oe, le, ol, ll = rows[b]
        print("  %-9s %5d              %.4f     %.4f             %.4f     %.4f"
              % (b, n, oe / n, le / n, ol / n, ll / n))
    fp_o = sum(o == "en" and it["lang"] != "en" for it, o in zip(items, owt))
    fn_o = sum(o != "en" and it["lang"] == "en" for it, o in zip(items, owt))
    fp_l = sum(l == "en" and it["lang"] != "en" for it, l in zip(items, ld))
    fn_l = sum(l != "en" and it["lang"] == "en" for it, l in zip(items, ld))
    print("  English errors: owt-dedup %d kept wrongly, %d dropped wrongly; "
          "langdetect %d, %d" % (fp_o, fn_o, fp_l, fn_l))


main()
