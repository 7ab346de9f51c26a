# httpd.sh - start t/httpd for a test: . "$OWT_SRC/t/httpd.sh" after t/lib.sh
#
# speech_pages DIR FILE... fixture pages: each speech FILE as three pages
# httpd_start DIR [ARGS]  serve DIR (more httpd options may follow); sets
#                         $port and $B (http://127.0.0.1:$port); requests
#                         are logged to $T/req.log
# The server is killed when the test exits, and exits by itself after
# 120 s or when the test's shell dies.

httpd_pid=
trap '[ -n "$httpd_pid" ] && kill "$httpd_pid" 2>/dev/null; rm -rf "$T"' EXIT

httpd_start() {
	dir=$1
	shift
	rm -f "$T/port"
	"$OWT_BUILD/t/httpd" -d "$dir" -p "$T/port" -l "$T/req.log" -t 120 "$@" &
	httpd_pid=$!
	i=0
	while [ ! -s "$T/port" ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -s "$T/port" ] || { echo "Bail out! t/httpd did not start"; exit 1; }
	port=$(cat "$T/port")
	B=http://127.0.0.1:$port
}

httpd_stop() {
	[ -n "$httpd_pid" ] && kill "$httpd_pid" 2>/dev/null
	wait "$httpd_pid" 2>/dev/null
	httpd_pid=
}

# speech_pages DIR FILE...: each text FILE (a speech of contrib/demo/data)
# as three pages DIR/NAME-0.html .. NAME-2.html, paragraphs of four
# sentences, titled "NAME part K".
speech_pages() {
	dir=$1
	shift
	for f do
		b=${f##*/}
		awk -v out="$dir/${b%.txt}" -v title="${b%.txt}" '
		function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
		{
			m = split(esc($0), s, /\. /)
			for (i = 1; i <= m; i += 4)
				p[++n] = s[i] ". " s[i + 1] ". " s[i + 2] ". " s[i + 3] "."
		}
		END {
			for (part = 0; part < 3; part++) {
				f = out "-" part ".html"
				printf "<html><head><title>%s part %d</title></head><body><div class=\"article\">\n", title, part >f
				for (i = int(part * n / 3) + 1; i <= int((part + 1) * n / 3); i++)
					printf "<p>%s</p>\n", p[i] >f
				printf "</div></body></html>\n" >f
				close(f)
			}
		}' "$f"
	done
}
