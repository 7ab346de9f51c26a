# nginx.sh - a loopback nginx for a test: . "$OWT_SRC/t/nginx.sh" after t/lib.sh
#
# nginx_start DIR    serve DIR on a free loopback port, as the current
#                    user, with its own configuration, logs and
#                    temporaries in $T/nginx; Range is honoured, except
#                    under /norange/ (max_ranges 0: a 200 with the whole
#                    file, as a server that ignores Range answers); sets
#                    $NB (http://127.0.0.1:PORT); status 1 and $nginx_why
#                    where nginx is missing or cannot start
# The server is stopped when the test exits (source this after httpd.sh:
# its trap stops both), or within a second of the test's shell dying.

nginx_pid=

nginx_start() {
	nginx_why=
	nbin=$(command -v nginx || echo /usr/sbin/nginx)
	if [ ! -x "$nbin" ]; then
		nginx_why="no nginx"
		return 1
	fi
	mkdir -p "$T/nginx/tmp"
	ntry=0
	while [ $ntry -lt 20 ]; do
		ntry=$((ntry + 1))
		# A free port: bound by nothing now, above the usual ones.
		nport=$(awk -v s="$$$ntry" 'BEGIN { srand(s); print 20000 + int(rand() * 40000) }')
		cat >"$T/nginx/nginx.conf" <<CONF
daemon off;
user $(id -un) $(id -gn);
worker_processes 1;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log;
events { worker_connections 64; }
http {
	access_log $T/nginx/access.log;
	client_body_temp_path $T/nginx/tmp;
	proxy_temp_path $T/nginx/tmp;
	fastcgi_temp_path $T/nginx/tmp;
	uwsgi_temp_path $T/nginx/tmp;
	scgi_temp_path $T/nginx/tmp;
	default_type application/octet-stream;
	server {
		listen 127.0.0.1:$nport;
		root $1;
		location /norange/ { max_ranges 0; }
	}
}
CONF
		rm -f "$T/nginx/nginx.pid"
		"$nbin" -p "$T/nginx" -e "$T/nginx/error.log" -c "$T/nginx/nginx.conf" \
		    >/dev/null 2>"$T/nginx/start.err" &
		nginx_pid=$!
		i=0
		while [ $i -lt 100 ] && kill -0 "$nginx_pid" 2>/dev/null &&
		    [ ! -s "$T/nginx/nginx.pid" ]; do
			sleep 0.05
			i=$((i + 1))
		done
		if [ -s "$T/nginx/nginx.pid" ] && kill -0 "$nginx_pid" 2>/dev/null; then
			NB=http://127.0.0.1:$nport
			# nginx has no time limit of its own, as t/httpd has.
			(while kill -0 $$ 2>/dev/null; do sleep 1; done
			    kill "$nginx_pid" 2>/dev/null) >/dev/null 2>&1 &
			return 0
		fi
		wait "$nginx_pid" 2>/dev/null
		nginx_pid=
		grep -q 'Address already in use' "$T/nginx/start.err" "$T/nginx/error.log" 2>/dev/null ||
			break
	done
	nginx_why="nginx does not start: $(head -c 200 "$T/nginx/start.err")"
	return 1
}

trap '[ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null; [ -n "${httpd_pid:-}" ] && kill "$httpd_pid" 2>/dev/null; rm -rf "$T"' EXIT
