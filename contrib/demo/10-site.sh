# 10-site: the web site the next stage crawls: the sample speeches wrapped
# in a news site's template (contrib/demo/data/site) with navigation, ads,
# sharing buttons, related links and comments, which the extraction must
# leave out; a members' area robots.txt forbids, and a copy of a page in
# it.
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
echo "$n pages in www/, and www/members/ that robots.txt forbids"
