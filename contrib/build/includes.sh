#!/bin/sh
# includes.sh - name the includes that break the library's layers
#
# usage: includes.sh ROOT
#
# The layers are ROOT/lib/README's list, lowest first: its lines "FOLDER
# job" (a name, two or more spaces, the job). The folders its line with
# "side by side" names share a layer and include none of each other's
# headers. A file in lib/F/ includes, as "folder/name.h", only headers of
# F and of the layers below F; kernels/ sits beside model: its files
# include its own headers ("owtcuda.h") and those of model and below, and
# model's may include kernels'. Every #include "..." line counts, in
# whatever #if branch. Prints "FILE:LINE: WHY" for each that breaks
# the rule and exits 1; none: no output, exit 0.
set -u
[ $# -eq 1 ] || { echo "usage: includes.sh ROOT" >&2; exit 2; }
root=${1%/}
[ -f "$root/lib/README" ] || { echo "includes.sh: no '$root/lib/README'" >&2; exit 3; }
files=$(cd "$root" && find lib kernels -type f \( -name '*.c' -o -name '*.cc' \
    -o -name '*.h' -o -name '*.cu' \) 2>/dev/null | LC_ALL=C sort)
kfiles=$(cd "$root" && ls kernels 2>/dev/null | tr '\n' ' ')
cd "$root" && awk -v kfiles=" $kfiles " '
FILENAME == "lib/README" {
	if ($0 ~ /^[a-z]+  +[^ ]/) {
		rank[$1] = ++n
		order = order (n > 1 ? " " : "") $1
	} else if ($0 ~ /side by side/)
		side = $0
	next
}
FNR == 1 {
	if (!readme) {
		readme = 1
		if (!("model" in rank)) {
			print "lib/README: no layer list (FOLDER  job lines)"
			bad = 1
			exit
		}
		rank["kernels"] = rank["model"]
		gsub(/[^a-z]+/, " ", side)
		ns = split(side, w, " ")
		for (i = 1; i <= ns; i++)
			if (w[i] in rank)
				peer[w[i]] = 1
	}
	split(FILENAME, p, "/")
	me = p[1] == "kernels" ? "kernels" : p[2]
	if (!(me in rank)) {
		print FILENAME ": folder " me " is not in lib/README"
		bad = 1
	}
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
	h = $0
	sub(/^[^"]*"/, "", h)
	sub(/".*/, "", h)
	if (index(h, "/") == 0) {
		if (me == "kernels" || index(kfiles, " " h " ") == 0) {
			if (me != "kernels")
				why = "not by folder (\"folder/" h "\")"
			else
				next
		} else
			why = check("kernels")
	} else {
		d = h
		sub(/\/.*/, "", d)
		why = check(d)
	}
	if (why != "") {
		print FILENAME ":" FNR ": \"" h "\": " why
		bad = 1
	}
}
END {
	if (bad)
		print "layers, lowest first (lib/README): " order
	exit bad
}

function check(d) {
	if (!(d in rank))
		return d " is not a folder of lib/README"
	if (d == me || (me == "kernels" && d == "model") ||
	    (me == "model" && d == "kernels"))
		return ""
	if (peer[d] && peer[me])
		return d " and " me " sit side by side"
	if (rank[d] > rank[me])
		return d " is above " me
	return ""
}
' lib/README $files
