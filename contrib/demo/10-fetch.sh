# 10-fetch: crawl the bundled pages from a loopback server this stage starts
# and stops itself. The pages are the sample speeches wrapped in a news site's
# template (contrib/demo/data/site) with navigation, ads, sharing buttons,
# related links and comments, which the extraction must leave out.
set -eu
www=$DEMO/www
mkdir -p "$www/members"
printf 'User-agent: *\nDisallow: /members/\n' >"$www/robots.txt"
n=0
for f in "$DATA"/speeches/*.txt; do
	n=$((n + 1))
	awk -v title="State of the Union address $n" -v tmpl="$DATA/site/page.html" '
	function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
	NF { body = body "    <p>" esc($0) "</p>\n" }
	END {
		while ((getline line < tmpl) > 0) {
			if (line ~ /@BODY@/) { printf "%s", body; continue }
			gsub(/@TITLE@/, title, line)
			print line
		}
	}' "$f" >"$www/address-$n.html"
done
cp "$www/address-1.html" "$www/members/address-1.html"

"$OWT_BUILD/t/httpd" -d "$www" -p "$DEMO/port" -t 300 &
httpd=$!
trap 'kill $httpd 2>/dev/null || :' EXIT
i=0
while [ ! -s "$DEMO/port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
B=http://127.0.0.1:$(cat "$DEMO/port")
{
	i=1
	while [ $i -le $n ]; do echo "$B/address-$i.html"; i=$((i + 1)); done
	echo "$B/members/address-1.html"
	echo "$B/missing.html"
	echo "$B/address-1.html"
	echo "https://www.youtube.com/watch?v=demo"
} >"$DEMO/urls.txt"
echo "\$ owt-fetch --allow-private --delay 0 --per-host 4 --log fetch.log < urls.txt > pages.jsonl"
owt-fetch --allow-private --delay 0 --per-host 4 --log "$DEMO/fetch.log" \
    <"$DEMO/urls.txt" >"$DEMO/pages.jsonl"
kill $httpd
wait $httpd 2>/dev/null || :
trap - EXIT
echo "outcomes in fetch.log:"
sed 's/.*"outcome":"\([^"]*\)".*"error":\([^,]*\),.*/  \1 \2/' "$DEMO/fetch.log" | sort | uniq -c
echo "first page, shortened:"
head -n 1 "$DEMO/pages.jsonl" | cut -c 1-240
