# score-dedup.awk - score a dedup run against make-neardups.py ground truth
# (shared/data/dedup-dev/truth.jsonl): pair recall at word-5-gram Jaccard
# >= 0.8, documents lost (dropped with no kept document >= 0.5 similar),
# and dropped members of boilerplate-sharing groups of different documents.
# usage: awk -v kept=KEPT_IDS_FILE -f score-dedup.awk truth.jsonl
BEGIN {
	while ((getline l < kept) > 0)
		k[l] = 1
}
/^\{"doc"/ {
	match($0, /"id": "[^"]*"/)
	id = substr($0, RSTART + 7, RLENGTH - 8)
	ndoc++
	if (!(id in k))
		dropped[id] = 1
}
/^\{"group"/ {
	match($0, /"kind": "[^"]*"/)
	kind = substr($0, RSTART + 9, RLENGTH - 10)
	s = $0
	while (match(s, /\["[^"]+", "[^"]+", [0-9.e-]+, [0-9.e-]+\]/)) {
		p = substr(s, RSTART + 1, RLENGTH - 2)
		s = substr(s, RSTART + RLENGTH)
		split(p, f, ", ")
		a = f[1]; b = f[2]; gsub(/"/, "", a); gsub(/"/, "", b)
		j = f[3] + 0
		if (j >= 0.8) {
			npairs++
			if (!(a in k) || !(b in k))
				hit++
		}
		if (j >= 0.5) {
			if (b in k) near[a] = 1
			if (a in k) near[b] = 1
		}
	}
	if (kind == "boilerplate-neg") {
		m = $0
		sub(/.*"members": \[/, "", m)
		sub(/\].*/, "", m)
		n = split(m, mem, ", ")
		for (i = 1; i <= n; i++) {
			gsub(/"/, "", mem[i])
			neg++
			if (!(mem[i] in k))
				negdropped++
		}
	}
}
END {
	for (d in dropped) {
		nd++
		if (!(d in near))
			lost++
	}
	printf "docs %d kept %d dropped %d pairs %d recall %.4f lost %d lostshare %.4f negdropped %d of %d\n", ndoc, ndoc - nd, nd, npairs, hit / npairs, lost, (nd ? lost / nd : 0), negdropped, neg
}
