# langid-heldout.py - build the held-out language ID set of issue 20 from
# what a Debian 12 machine holds: the translations of its packages
# (/usr/share/locale/*/LC_MESSAGES/*.mo: msgstr for the language, msgid
# for English) and their translated manual pages (/usr/share/man/LANG,
# English from /usr/share/man/man1), rendered with mandoc. Short and long
# texts: 20 to 2000 characters, log-uniform, like langid-dev.jsonl.
#
# Never tune on its output: it measures, once before a change and once
# after. It shares no source with langid-dev.jsonl (Debian's installation
# guide and fortunes), and any text that shares a run of text with
# langid-dev.jsonl (any 48-character run) is left out all the same.
#
# Run by /usr/bin/python3 (stdlib only):
#   langid-heldout.py [--dev langid-dev.jsonl] OUT.jsonl
# Writes {"text", "lang", "source"} lines, ISO 639-1 codes (zh for both
# Chinese scripts). The same installed packages give the same file; other
# packages, other texts (keep the copy you measured).
import argparse
import gettext
import glob
import json
import math
import os
import random
import re
import subprocess
import sys

LANGS = {  # locale directory names per code
    "bg": ["bg"], "ca": ["ca"], "cs": ["cs"], "da": ["da"], "de": ["de"],
    "el": ["el"], "es": ["es"], "fi": ["fi"], "fr": ["fr"], "hr": ["hr"],
    "hu": ["hu"], "id": ["id"], "it": ["it"], "ja": ["ja"], "ko": ["ko"],
    "nl": ["nl"], "pl": ["pl"], "pt": ["pt", "pt_BR"], "ro": ["ro"],
    "ru": ["ru"], "sk": ["sk"], "sl": ["sl"], "sv": ["sv"], "tr": ["tr"],
    "uk": ["uk"], "vi": ["vi"], "zh": ["zh_CN", "zh_TW"],
}
PER_LANG = 100
ENGLISH = 700
MIN, MAX = 20, 2000
WINDOW = 40
FORMAT = re.compile(r"%[-+ #0-9.]*[a-zA-Z]|\{[0-9a-z_]*\}|&(?=\w)|_(?=\w)|\\n")


def letters_ok(s):
    """Mostly words: at least 60 % letters or spaces, a few letters."""
    if len(s) < 3:
        return False
    good = sum(ch.isalpha() or ch.isspace() for ch in s)
    return good >= 0.6 * len(s) and sum(ch.isalpha() for ch in s) >= 3


def clean(s):
    s = FORMAT.sub("", s)
    return re.sub(r"[ \t]+", " ", s).strip()


def mo_units(path, want):
    """Translated strings (want='str') or their English originals ('id')."""
    try:
        with open(path, "rb") as f:
            cat = gettext.GNUTranslations(f)._catalog
    except Exception:
        return []
    out = []
    for k, v in cat.items():
        if isinstance(k, tuple):
            k = k[0]
        if not k or not v or k == v:
            continue
        s = clean(k if want == "id" else v)
        if letters_ok(s) and "\x04" not in s:
            out.append(s)
    out.sort()
    return out


def man_units(path, english=None):
    """Paragraphs of a manual page, without those found in its English page."""
    try:
        r = subprocess.run(["mandoc", "-T", "utf8", "-O", "width=1000", path],
                           capture_output=True, timeout=30)
    except Exception:
        return []
    text = re.sub(".\x08", "", r.stdout.decode("utf-8", "replace"))
    lines = text.split("\n")[1:-2]  # header and footer lines
    paras, cur = [], []
    for line in lines + [""]:
        if line.strip():
            cur.append(line.strip())
        elif cur:
            paras.append(" ".join(cur))
            cur = []
    out = []
    for p in paras:
        p = clean(p)
        if len(p) < MIN or not letters_ok(p) or (english and p in english):
            continue
        out.append(p)
    return out


def docs_for(code, dirs, english_man):
    docs = []
    for d in dirs:
        for mo in sorted(glob.glob("/usr/share/locale/%s/LC_MESSAGES/*.mo" % d)):
            u = mo_units(mo, "str")
            if u:
                docs.append(("mo:%s/%s" % (d, os.path.basename(mo)), u))
        for page in sorted(glob.glob("/usr/share/man/%s/man[1-8]/*" % d)):
            name = os.path.basename(page).split(".")[0]
            u = man_units(page, english_man.get(name))
            if u:
                docs.append(("man:%s/%s" % (d, os.path.basename(page)), u))
    return docs


def english_docs(rng):
    docs, seen = [], set()
    for mo in sorted(glob.glob("/usr/share/locale/*/LC_MESSAGES/*.mo")):
        dom = os.path.basename(mo)
        if dom in seen:
            continue
        seen.add(dom)
        u = mo_units(mo, "id")
        if u:
            docs.append(("mo:en/" + dom, u))
    pages = sorted(glob.glob("/usr/share/man/man1/*"))
    rng.shuffle(pages)
    for page in pages[:600]:
        u = man_units(page)
        if u:
            docs.append(("man:en/" + os.path.basename(page), u))
    return docs


def english_paras(names):
    """Paragraph sets of the English pages with these names (to drop untranslated text)."""
    out = {}
    for name in names:
        for page in glob.glob("/usr/share/man/man[1-8]/%s.*" % glob.escape(name)):
            out[name] = set(man_units(page))
            break
    return out


def make_items(code, docs, n, rng, dev):
    items, used = [], {}
    tries = 0
    while len(items) < n and tries < 50 * n and docs:
        tries += 1
        target = int(math.exp(rng.uniform(math.log(MIN), math.log(MAX))))
        src, units = docs[rng.randrange(len(docs))]
        taken = used.setdefault(src, set())
        if len(taken) >= len(units) or sum(1 for s, _ in items if s == src) >= 3:
            continue
        start = rng.randrange(len(units))
        if start in taken:
            continue
        parts, k = [], start
        while k < len(units) and k not in taken and len("\n".join(parts)) < target:
            parts.append(units[k])
            k += 1
        text = "\n".join(parts)
        if len(text) > max(target * 1.5, MIN) and len(text) > MIN:
            cut = text.rfind(" ", 0, max(int(target * 1.2), MIN))
            text = text[:cut] if cut >= MIN else text[:max(target, MIN)]
        text = text.strip()
        if len(text) < MIN or len(text) > MAX:
            continue
        if any(text[i:i + WINDOW] in dev for i in range(0, max(1, len(text) - WINDOW + 1), 8)):
            continue
        taken.update(range(start, k))
        items.append((src, {"text": text, "lang": code, "source": src}))
    return [it for _, it in items]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dev", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "../../../shared/data/langid-dev.jsonl"))
    ap.add_argument("out")
    a = ap.parse_args()
    rng = random.Random(20)
    dev = set()
    if os.path.exists(a.dev):
        for line in open(a.dev, encoding="utf-8"):
            t = json.loads(line)["text"]
            for i in range(len(t) - WINDOW + 1):
                dev.add(t[i:i + WINDOW])
    else:
        print("langid-heldout: %s not found; no overlap check" % a.dev, file=sys.stderr)
    items = make_items("en", english_docs(rng), ENGLISH, rng, dev)
    for code in sorted(LANGS):
        names = set()
        for d in LANGS[code]:
            for page in glob.glob("/usr/share/man/%s/man[1-8]/*" % d):
                names.add(os.path.basename(page).split(".")[0])
        docs = docs_for(code, LANGS[code], english_paras(sorted(names)))
        got = make_items(code, docs, PER_LANG, rng, dev)
        print("langid-heldout: %s %d items from %d sources" % (code, len(got), len(docs)),
              file=sys.stderr)
        items += got
    rng.shuffle(items)
    with open(a.out, "w", encoding="utf-8") as f:
        for it in items:
            f.write(json.dumps(it, ensure_ascii=False) + "\n")
    print("langid-heldout: %d items" % len(items), file=sys.stderr)


main()
