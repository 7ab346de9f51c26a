# readability-lxml.py - the article text of saved pages by readability-lxml
# (Debian's python3-readability), for contrib/bench/owt-fetch.sh to score
# beside owt-fetch --extract on the same pages.
#
#   readability-lxml.py FILES.txt OUT.jsonl
#
# FILES.txt names one page a line (gzip-compressed or not); OUT gets one
# {"url": FILE, "text": ...} line each, the text of Document.summary()'s
# HTML with a line per block. Prints the seconds spent in readability.
# Run by /usr/bin/python3.
import gzip
import json
import sys
import time

import lxml.html
from readability import Document

BLOCKS = ("p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
          "blockquote", "tr", "br", "table", "ul", "ol", "dd", "dt")


def text_of(html):
    if not html.strip():
        return ""
    root = lxml.html.fromstring(html)
    for el in root.iter(*BLOCKS):
        el.tail = "\n" + el.tail if el.tail else "\n"
    lines = (" ".join(l.split()) for l in root.text_content().split("\n"))
    return "\n".join(l for l in lines if l)


def main():
    spent = 0.0
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        for name in open(sys.argv[1], encoding="utf-8"):
            name = name.rstrip("\n")
            with open(name, "rb") as f:
                raw = f.read()
            if raw[:2] == b"\x1f\x8b":
                raw = gzip.decompress(raw)
            start = time.process_time()
            try:
                text = text_of(Document(raw).summary(html_partial=True))
            except Exception:
                text = ""
            spent += time.process_time() - start
            out.write(json.dumps({"url": name, "text": text}, ensure_ascii=False) + "\n")
    print("%.2f" % spent)


main()
