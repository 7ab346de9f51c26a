#!/bin/sh
# circles.sh - name the circles of files that use each other's functions or variables
#
# usage: circles.sh OBJDIR SRCDIR
#
# OBJDIR/REL.o (any depth) is the object of SRCDIR/REL.c, .cc or .cu (an
# object without its source, left by an older layout, is passed over). A
# file uses another when its object leaves a name undefined (nm's U, or
# w and v, a weak reference) that the other's object defines. Each set
# of files that reach one another through uses (a strongly connected
# component of the graph) is a circle: the script prints it, one line
# of its files, then each use inside it with the names used, and exits
# 1. No circle: no output, exit 0. A missing nm or object: exit 3.
# nm sees only what the compiler kept: the #if branches not taken on
# this machine, and uses inlined away, are not in the graph.
set -u
[ $# -eq 2 ] || { echo "usage: circles.sh OBJDIR SRCDIR" >&2; exit 2; }
obj=${1%/} src=${2%/}
list=$(find "$obj" -name '*.o' | LC_ALL=C sort) || exit 3
[ -n "$list" ] || { echo "circles.sh: no objects under '$obj'" >&2; exit 3; }
# One nm for all: "OBJ: NAME TYPE ...", OBJ named by its source.
syms=$(nm -A -P $list) || { echo "circles.sh: nm failed" >&2; exit 3; }
printf '%s\n' "$syms" | awk -v obj="$obj/" -v src="$src/" '
!($1 in srcname) {
	o = substr($1, 1, length($1) - 1)
	rel = substr(o, length(obj) + 1, length(o) - length(obj) - 2)
	name = ""
	for (x = 1; x <= 3; x++) {
		ext = x == 1 ? ".c" : x == 2 ? ".cc" : ".cu"
		if ((getline t < (src rel ext)) >= 0)
			name = rel ext
		close(src rel ext)
	}
	srcname[$1] = name
}
NF >= 3 && srcname[$1] != "" { print srcname[$1], $2, $3 }
' | awk '
$3 == "U" || $3 == "w" || $3 == "v" { use[++nu] = $1 " " $2; next }
$3 ~ /^[TDBRWVCGSiu]$/ { def[$2] = def[$2] " " $1; file[$1] = 1 }
END {
	for (i = 1; i <= nu; i++) {
		split(use[i], u, " ")
		n = split(def[u[2]], d, " ")
		for (j = 1; j <= n; j++) {
			if (d[j] == u[1])
				continue
			k = u[1] " " d[j]
			if (!(k in why)) {
				adj[u[1]] = adj[u[1]] " " d[j]
				why[k] = u[2]
			} else if (index(" " why[k] " ", " " u[2] " ") == 0)
				why[k] = why[k] " " u[2]
			file[u[1]] = file[d[j]] = 1
		}
	}
	nf = 0
	for (f in file)
		names[++nf] = f
	sortstr(names, nf)
	for (i = 1; i <= nf; i++)
		if (!(names[i] in idx))
			scc(names[i])
	exit found
}

# Tarjan: the strongly connected components, an explicit stack of calls
# (awk functions have no local arrays to recurse with).
function scc(root,    v, w, n, top, ns, c, members, m, i, a) {
	top = 0
	call[++top] = root
	pos[top] = 0
	idx[root] = low[root] = ++counter
	st[++ns0] = root
	on[root] = 1
	while (top > 0) {
		v = call[top]
		n = split(adj[v], a, " ")
		if (pos[top] < n) {
			w = a[++pos[top]]
			if (!(w in idx)) {
				call[++top] = w
				pos[top] = 0
				idx[w] = low[w] = ++counter
				st[++ns0] = w
				on[w] = 1
			} else if (on[w] && idx[w] < low[v])
				low[v] = idx[w]
			continue
		}
		top--
		if (top > 0 && low[v] < low[call[top]])
			low[call[top]] = low[v]
		if (low[v] != idx[v])
			continue
		c = 0
		do {
			w = st[ns0--]
			on[w] = 0
			members[++c] = w
		} while (w != v)
		if (c > 1)
			report(members, c)
	}
}

function report(members, c,    i, j, line, k) {
	found = 1
	sortstr(members, c)
	line = "circle:"
	for (i = 1; i <= c; i++)
		line = line " " members[i]
	print line
	for (i = 1; i <= c; i++)
		for (j = 1; j <= c; j++) {
			k = members[i] " " members[j]
			if (k in why)
				print "  " members[i] " uses " members[j] ": " why[k]
		}
}

function sortstr(a, n,    i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
}
'
