# httpd.sh - start t/httpd for a test: . "$OWT_SRC/t/httpd.sh" after t/lib.sh
#
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
