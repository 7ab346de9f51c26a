# 20-dataset: the data stages through the dataset recipe, owt.mk, as they
# run at scale (owt(7)): a loopback server for the site of stage 10, a
# list of its URLs in urls/, and the documents in hand in docs/ (the
# speeches as .txt, the Bible chapters, crawl-extra.jsonl: copies for
# the dedup to catch). The recipe filters and fetches the URLs, cleans
# every document, drops the duplicates over the whole corpus, shuffles,
# encodes and packs, in two shards, two jobs at a time; its summary ends
# the run. The same command on 64 shards over a cluster gives the same
# bytes.
set -eu
cd "$DEMO"
"$OWT_BUILD/t/httpd" -d www -p port -t 300 &
httpd=$!
trap 'kill $httpd 2>/dev/null || :' EXIT
i=0
while [ ! -s port ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
B=http://127.0.0.1:$(cat port)
mkdir -p urls docs
{
	n=$(ls www | grep -c '^address-')
	i=1
	while [ $i -le "$n" ]; do echo "$B/address-$i.html"; i=$((i + 1)); done
	echo "$B/members/address-1.html"
	echo "$B/missing.html"
	echo "$B/address-1.html"
	echo "https://www.youtube.com/watch?v=demo"
} >urls/site.txt
cp -R "$DATA/speeches" "$DATA/kjv.jsonl.gz" "$DATA/crawl-extra.jsonl" docs/
fetch="--allow-private --delay 0 --per-host 4"
set -- -f "$OWT_SRC/contrib/install/owt.mk" URLS=urls DOCS=docs OUT=data SHARDS=2 \
    NAME=owt FETCH_FLAGS="$fetch"
echo "\$ make -f $OWT_SRC/contrib/install/owt.mk URLS=urls DOCS=docs OUT=data SHARDS=2 NAME=owt FETCH_FLAGS='$fetch' -j2"
make --no-print-directory "$@" -j2
kill $httpd
wait $httpd 2>/dev/null || :
trap - EXIT
echo "\$ make ... -n    # what the same command would do now: nothing but the summary"
make --no-print-directory -n "$@" |
    grep -v -e "^mkdir -p 'data' && flock" -e '^cat ' || echo '  (nothing)'
echo "first page fetched, shortened:"
head -n 1 data/2-fetch/site.txt.0-of-2.jsonl | cut -c 1-240
