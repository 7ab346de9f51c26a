#!/bin/sh
# contrib/install/owt.mk with WARCS= (pages in WARC archives, extracted
# instead of fetched) beside URLS=, on loopback pages: one shard and three
# give the same .bin/.idx, which the one-shot pipeline gives on the
# fetched pages followed by owt-fetch --extract of the archives; the
# summary counts the archives' pages; an archive added is extracted and
# its units cleaned, nothing fetched; WARCS alone builds; a file that is
# not an archive fails the build, named.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/httpd.sh"

command -v flock >/dev/null || skip_all "no flock (util-linux)"
MK=$OWT_SRC/contrib/install/owt.mk
cd "$T" || exit 3
sp=$OWT_SRC/contrib/demo/data/speeches
mkdir -p www urls arch
speech_pages www "$sp/address-01.txt" "$sp/address-02.txt" "$sp/address-03.txt"
httpd_start www -t 300
ls www | sed -n "s|^address-01-.*|$B/&|p" >urls/a.txt
ls www | sed -n "s|^address-02-.*|$B/&|p" >crawl.txt
ls www | sed -n "s|^address-03-.*|$B/&|p" >later.txt
run owt-fetch -q --allow-private --delay 0 --connections 1 --warc-file arch/crawl crawl.txt
is "$rc" 0 "a crawl into arch/crawl.warc.gz"
cp "$OWT_SRC/t/data/owt-small.warc.gz" arch/small.warc.gz

mk() {	# OUT SHARDS [make args]: the recipe, quietly
	o=$1 n=$2
	shift 2
	make -s --no-print-directory -f "$MK" URLS=urls OUT="$o" SHARDS="$n" NAME=t \
	    FETCH_FLAGS="--allow-private --delay 0.01" "$@"
}
dataset() {	# A B DESC: the datasets A and B are the same bytes
	if cmp -s "$1.bin" "$2.bin" && cmp -s "$1.idx" "$2.idx"; then
		ok "$3"
	else
		not_ok "$3"
		cmp "$1.bin" "$2.bin" 2>&1 | sed 's/^/# /'
	fi
}

run mk one 1 WARCS=arch
is "$rc" 0 "SHARDS=1 WARCS=arch builds"
run mk three 3 -j2 WARCS=arch
is "$rc" 0 "SHARDS=3 WARCS=arch builds"
dataset one/t_text_document three/t_text_document "one shard and three: the same dataset"
owt-fetch -q --allow-private --delay 0 --connections 1 --workers 0 urls/a.txt >ref.pages &&
    owt-fetch -q --extract arch/crawl.warc.gz arch/small.warc.gz >ref.warc &&
    jsonl-merge -q --add-id ref ref.pages ref.warc >ref.merged &&
    owt-dedup -q ref.merged | jsonl-merge -q --shuffle --seed 1234 |
    bpe-encode -q --append-eod | idx-pack -q -o ref
dataset ref three/t_text_document "it equals the one-shot pipeline: the pages, then the archives' pages"
n=$(wc -l <ref.warc | tr -d ' ')
like three/t.summary "^warc +$n documents" "the summary counts the archives' pages ($n)"
is "$(cat three/2-warc/warc.*-of-3.jsonl | wc -l | tr -d ' ')" "$n" "the three units hold them all"
like three/2-warc/warc.0-of-3.jsonl '"adlr_id":"warc\.0-of-3-0000000001"' "with ids as a fetch unit's pages have"

# An archive added: extracted, its units cleaned again, nothing fetched.
: >"$T/req.log"
run owt-fetch -q --allow-private --delay 0 --connections 1 --warc-file arch/later later.txt
run mk three 3 -n WARCS=arch
unlike out 'owt-stage (filter|chunk|fetch) ' "make -n after adding an archive: nothing is fetched"
like out 'owt-stage warc three/2-warc/all.jsonl arch/crawl.warc.gz arch/later.warc.gz arch/small.warc.gz' \
    "the archives are extracted again, in order"
is "$(grep -c 'owt-stage clean ' out)" 3 "and only their three units are cleaned"

# WARCS alone.
run mk only 2 URLS=none WARCS=arch/small.warc.gz
is "$rc" 0 "WARCS without URL files builds"
owt-fetch -q --extract arch/small.warc.gz | owt-dedup -q |
    jsonl-merge -q --shuffle --seed 1234 | bpe-encode -q --append-eod | idx-pack -q -o refonly
dataset refonly only/t_text_document "it equals the one-shot pipeline on the archive"

# A file that is not an archive.
mkdir bad
echo "$B/address-01-0.html" >bad/list.txt
run mk badw 1 URLS=none WARCS=bad
is "$rc" 2 "a file in WARCS that is no archive: the build fails (make's 2)"
like err "^owt-stage: warc: 'bad/list.txt': not a WARC archive$" "named"
is "$(ls badw | grep -c text_document)" 0 "and no dataset is published"
mkdir -p clash
: >clash/warc
run make -s -f "$MK" URLS=clash WARCS=arch OUT=bad
is "$rc" 2 "a URL file named warc with WARCS exits 2"
like err "owt.mk: a URL file named 'warc' and WARCS: rename the file" "it says so"
done_testing
