#!/bin/sh
# Every program: -h prints the usage line of its man page's SYNOPSIS, the
# options listed by -h are the options the man page describes, with the
# same argument names, the options required (unbracketed) are the same
# in both and refused when missing, -h exits 0, a bad option exits 2 with
# the usage line on stderr, --version works, and every man page passes
# mandoc's linter.
. "${OWT_SRC:-.}/t/lib.sh"

command -v mandoc >/dev/null || skip_all "mandoc is not installed"

# The options named in the first column of "  -k, --keep-going  ..." lines.
help_opts() {
	sed -n 's/^  *\(-[^ ].*\)$/\1/p' "$1" | sed 's/   *.*//' |
	    tr ', ' '\n\n' | grep -E '^--?[A-Za-z0-9]' | sort -u
}

# The options of ".It Fl x , Fl \-long Ar arg" items.
man_opts() {
	grep -E '^\.It Fl ' "$1" | sed 's/\\-/-/g' |
	    awk '{ for (i = 1; i < NF; i++) if ($i == "Fl") print "-" $(i + 1) }' |
	    sort -u
}

# "--name arg" of each -h line: the first column, up to two spaces, or up
# to the column where the -h line's text starts (-h's own line says where).
help_args() {
	awk 'NR > 1 && /^  +-/ {
		if (col == 0 && match($0, /print this help/))
			col = RSTART
		s = $0
		if (match(s, /[^ ]  +/))
			s = substr(s, 1, RSTART)
		else
			s = substr(s, 1, col - 1)
		sub(/^ +/, "", s)
		sub(/^-[^-], /, "", s)
		sub(/ +$/, "", s)
		if (s ~ /^--/)
			print s
	}' "$1" | sort -u
}

# "--name arg" of each ".It Fl \-name Ar arg" item (Oo/Oc as [ ]), not of
# tables (Ta) or items with words between (No).
man_args() {
	grep -E '^\.It Fl ' "$1" | grep -v -e ' Ta ' -e ' No ' |
	    sed 's/\\-/-/g' | awk '{
		start = 0
		for (i = 2; i < NF; i++)
			if ($i == "Fl" && $(i + 1) ~ /^-/)
				start = i
		if (start == 0)
			next
		out = "-" $(start + 1)
		pre = ""
		for (i = start + 2; i <= NF; i++) {
			if ($i == "Ar" || $i == "Cm")
				continue
			if ($i == "Oo") {
				pre = "["
				continue
			}
			if ($i == "Oc") {
				out = out "]"
				continue
			}
			out = out " " pre $i
			pre = ""
		}
		print out
	}' | sort -u
}

# The options of a usage line outside brackets (opt.h's OPT_REQUIRED).
usage_required() {
	awk '{
		depth = 0
		for (i = 2; i <= NF; i++) {
			w = $i
			while (substr(w, 1, 1) == "[") {
				depth++
				w = substr(w, 2)
			}
			if (depth == 0 && w ~ /^-/)
				print w
			depth -= gsub(/]/, "", w)	# "[addr:]port]" closes two
		}
	}' "$1" | sort -u
}

# The options of the man page's SYNOPSIS outside Op and Oo/Oc.
man_required() {
	sed -n '/^\.Sh SYNOPSIS/,/^\.Sh /p' "$1" | sed 's/\\-/-/g' | awk '
		/^\.Oo/ { depth++ }
		/^\.Oc/ { depth-- }
		depth == 0 && $1 == ".Fl" { print "-" $2 }' | sort -u
}

for p in "$OWT_BUILD"/bin/*; do
	prog=${p##*/}
	page=$OWT_SRC/man/$prog.1
	if [ ! -f "$page" ]; then
		not_ok "$prog has a man page"
		continue
	fi
	run "$prog" -h
	is "$rc" 0 "$prog -h exits 0"
	head -n 1 "$T/out" | sed 's/^usage: //' >"$T/usage"
	mandoc -T ascii -O width=1000 "$page" | perl -pe 's/.\x08//g' |
	    sed -n '/^SYNOPSIS/,/^[A-Z]/p' | sed '1d;$d' |
	    tr -s ' \n' '  ' | sed 's/^ *//; s/ *$//' >"$T/synopsis"
	echo >>"$T/synopsis"
	same "$T/usage" "$T/synopsis" "$prog usage line equals its SYNOPSIS"
	help_opts "$T/out" >"$T/hopts"
	man_opts "$page" >"$T/mopts"
	same "$T/hopts" "$T/mopts" "$prog -h options equal the man page's"
	[ -s "$T/hopts" ] && ok "$prog lists its options" ||
	    not_ok "$prog lists its options"
	help_args "$T/out" >"$T/hargs"
	man_args "$page" >"$T/margs"
	same "$T/hargs" "$T/margs" "$prog -h arguments equal the man page's"
	head -n 1 "$T/out" >"$T/usage1"
	usage_required "$T/usage1" >"$T/hreq"
	man_required "$page" >"$T/mreq"
	same "$T/hreq" "$T/mreq" "$prog required options unbracketed in SYNOPSIS"
	# Each required option is required: without it, a usage error naming it.
	for o in $(cat "$T/hreq"); do
		run "$prog" </dev/null
		is "$rc" 2 "$prog without $o exits 2"
		like "$T/err" "^$prog: .*$o" "$prog without $o says so"
	done
	run "$prog" --no-such-option
	is "$rc" 2 "$prog with a bad option exits 2"
	head -n 2 "$T/err" | grep -q '^usage: ' && ok "$prog usage on stderr" ||
	    not_ok "$prog usage on stderr"
	run "$prog" --version
	is "$rc" 0 "$prog --version exits 0"
	like "$T/out" "^$prog [0-9]" "$prog --version names the program"
done

for page in "$OWT_SRC"/man/*.[157]; do
	mandoc -T lint -W warning "$page" >"$T/lint" 2>&1
	# mandoc warns about Dd in the future and the manual section title;
	# anything else is a real defect.
	grep -v -e 'Dd ' -e 'missing date' "$T/lint" >"$T/lint2"
	[ -s "$T/lint2" ] && { not_ok "mandoc -T lint ${page##*/}";
	    sed 's/^/# /' "$T/lint2"; } || ok "mandoc -T lint ${page##*/}"
done

# owt.7 lists every program.
for p in "$OWT_BUILD"/bin/*; do
	like "$OWT_SRC/man/owt.7" "^\.Xr ${p##*/} 1" "owt.7 lists ${p##*/}"
done
done_testing
