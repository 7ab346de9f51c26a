#!/bin/sh
# contrib/install/owt.mk, the dataset recipe (owt(7)), on 45 loopback pages in four
# URL files: one shard, four shards and the one-shot pipeline give the same
# .bin/.idx; a rerun does nothing; a fifth URL file fetches only its own
# chunks; DECONTAM equals owt-dedup --decontam; DOCS (documents in hand)
# equals jsonl-merge of the pages and the documents, and a document added
# fetches nothing; kill -9 of the whole run
# during fetch, dedup and pack, then the same command again, gives the same
# bytes; a second run refuses, or waits with WAIT; the Slurm job files, run
# as Slurm would run them, give the same bytes, and their submit script
# chains the jobs; a URL appended to a list is fetched alone; the fetch
# step's ordering of pages.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/httpd.sh"

command -v flock >/dev/null || skip_all "no flock (util-linux)"
MK=$OWT_SRC/contrib/install/owt.mk
cd "$T" || exit 3

# The pages: each sample speech cut in three, paragraphs of four
# sentences; a copy, a near copy (one word changed) and a page robots.txt
# forbids.
mkdir -p www/members urls
printf 'User-agent: *\nDisallow: /members/\n' >www/robots.txt
speech_pages www "$OWT_SRC"/contrib/demo/data/speeches/*.txt
cp www/address-01-0.html www/members/secret.html
cp www/address-02-1.html www/copy.html
sed 's/the /a /' www/address-03-2.html >www/near.html
httpd_start www -t 600

# a.txt .. d.txt, and e.txt added later; b.txt repeats a URL of a.txt and
# names a page that the filter drops, and one that takes 2.5 s (too short
# to keep) at the head of chunk 1 of 2, so that a fetch can be killed with
# pages written (while the rest of the chunk comes in, 0.25 s apart).
ls www | sed -n "s|^address-.*|$B/&|p" >all.txt
{ sed -n 1,10p all.txt; echo "$B/missing.html"; echo "$B/members/secret.html"; } >urls/a.txt
{ sed -n 11,16p all.txt; echo "$B/__owt/slow/2500/200"; sed -n 17,20p all.txt
  echo "$B/copy.html"; sed -n 3p all.txt; echo "https://www.youtube.com/watch?v=x"; } >urls/b.txt
{ sed -n 21,30p all.txt; echo "$B/near.html"; } >urls/c.txt
sed -n 31,36p all.txt >urls/d.txt
sed -n 37,42p all.txt >e.txt

FETCH="--allow-private --delay 0.01"
mk() {	# OUT SHARDS [make args]: the recipe, quietly
	o=$1 n=$2
	shift 2
	make -s --no-print-directory -f "$MK" URLS=urls OUT="$o" SHARDS="$n" NAME=t \
	    FETCH_FLAGS="$FETCH" "$@"
}

# The one-shot pipeline (README's, the programs one after the other) on
# the same lists: fetched one page at a time, so in URL order.
oneshot() {	# PREFIX FILE...
	p=$1
	shift
	cat "$@" | owt-fetch -q --allow-private --delay 0.01 --connections 1 \
	    --workers 0 >"$p.pages" &&
	    jsonl-merge -q --add-id ref "$p.pages" >"$p.merged" &&
	    owt-dedup -q "$p.merged" >"$p.clean" &&
	    jsonl-merge -q --shuffle --seed 1234 "$p.clean" >"$p.shuffled" &&
	    bpe-encode -q --append-eod "$p.shuffled" | idx-pack -q -o "$p"
}
urls_of() { sed 's/^{"url":"\([^"]*\)".*/\1/' "$@"; }
# dataset A B DESC: the datasets A and B are the same bytes.
dataset() {
	if cmp -s "$1.bin" "$2.bin" && cmp -s "$1.idx" "$2.idx"; then
		ok "$3"
	else
		not_ok "$3"
		cmp "$1.bin" "$2.bin" 2>&1 | sed 's/^/# /'
		cmp "$1.idx" "$2.idx" 2>&1 | sed 's/^/# /'
		idx-pack --check "$1" "$2" 2>&1 | sed 's/^/# /'
		o=${2%/*}
		[ ! -f "$o/t.summary" ] || sed 's/^/# /' "$o/t.summary"
	fi
}

run mk one 1
is "$rc" 0 "SHARDS=1 builds"
run idx-pack --check one/t_text_document
is "$(cat out)" "one/t_text_document: ok: 36 sequences, 36 documents, 110070 tokens (uint16)" \
    "the dataset: 39 pages less the copy, the repeat and the near copy"
run mk four 4 -j2
is "$rc" 0 "SHARDS=4 -j2 builds"
dataset one/t_text_document four/t_text_document "SHARDS=1 and SHARDS=4 give the same bytes"
like four/t.summary '^deduped +36 documents' "the summary counts the documents"
like four/t.summary '^  near duplicate: 1$' "and the drops by reason"
run oneshot ref urls/a.txt urls/b.txt urls/c.txt urls/d.txt
is "$rc" 0 "the one-shot pipeline runs"
urls_of ref.pages >ref.urls
cat urls/a.txt urls/b.txt urls/c.txt urls/d.txt | awk '!seen[$0]++' |
    grep -Fxf ref.urls >want.urls
same ref.urls want.urls "the one-shot fetch is in URL order (one connection)"
dataset ref four/t_text_document "SHARDS=4 gives the one-shot pipeline's bytes"
cat four/5-final/*.jsonl >four.final
is "$(urls_of four.final | tr '\n' ' ')" "$(urls_of ref.clean | tr '\n' ' ')" \
    "before the shuffle, the documents stand in URL order"

# Nothing to do: make -n runs no step.
run mk four 4 -n
is "$rc" 0 "make -n on a built dataset"
unlike out 'owt-stage|idx-pack|owt-dedup' "a rerun has nothing to do"
run mk four 4
is "$rc" 0 "the rerun exits 0 (the dataset is complete)"
same four/t.summary out "and prints the summary"

# A fifth URL file: its own filter and chunks are fetched, nothing else is.
cp e.txt urls/e.txt
run mk four 4 -n
grep -E 'owt-stage (filter|fetch) ' out | sed "s|.*owt-stage ||" >fetches
printf '%s\n' 'filter urls/e.txt four/1-filter/e.txt' \
    'fetch four/2-fetch/e.txt.0-of-4' 'fetch four/2-fetch/e.txt.1-of-4' \
    'fetch four/2-fetch/e.txt.2-of-4' 'fetch four/2-fetch/e.txt.3-of-4' >want
same fetches want "make -n after adding e.txt: only its chunks are fetched"
grep -c 'owt-stage clean ' out >nclean
is "$(cat nclean)" 4 "and only they are cleaned"
like out 'owt-stage dedup ' "the global steps run again"
run mk four 4 -j2
is "$rc" 0 "the build with e.txt"
run oneshot ref5 urls/a.txt urls/b.txt urls/c.txt urls/d.txt urls/e.txt
dataset ref5 four/t_text_document "it equals the one-shot pipeline over five files"

# Decontamination (DECONTAM), on the five files: one pass over all units,
# as owt-dedup --decontam does in the one-shot pipeline.
tr -s ' ' '\n' <"$OWT_SRC/contrib/demo/data/speeches/address-05.txt" |
    sed -n 100,130p | tr -d '"\\' | tr '\n' ' ' |
    sed 's/^/{"text":"/; s/ $/"}/' >task.jsonl
run mk dec 2 -j2 DECONTAM=task.jsonl
is "$rc" 0 "SHARDS=2 DECONTAM=task.jsonl builds"
like dec/t.summary '^decontam ' "the summary counts what decontam wrote"
like dec/6-decontam/report.jsonl '"reason":"cut"' "a document was cut"
owt-dedup -q --decontam task.jsonl ref5.merged >refdec.clean &&
    jsonl-merge -q --shuffle --seed 1234 refdec.clean |
    bpe-encode -q --append-eod | idx-pack -q -o refdec
dataset refdec dec/t_text_document "it equals owt-dedup --decontam in the one-shot pipeline"

# Documents in hand (DOCS), on the five files: a folder with a speech as
# text (a copy of three fetched pages' text, not the same bytes), the
# Bible chapters and a JSONL file that repeats a Bible chapter; they
# follow the pages, as jsonl-merge of the pages and the folder does in the
# one-shot pipeline.
mkdir -p docs
cp "$OWT_SRC/contrib/demo/data/speeches/address-07.txt" docs/a-speech.txt
cp "$OWT_SRC/contrib/demo/data/kjv.jsonl.gz" docs/b-kjv.jsonl.gz
gzip -dc docs/b-kjv.jsonl.gz | sed -n 5p >docs/c-repeat.jsonl
run mk withdocs 3 -j2 DOCS=docs
is "$rc" 0 "SHARDS=3 DOCS=docs builds"
jsonl-merge -q --add-id ref ref5.pages docs >refdocs.merged &&
    owt-dedup -q refdocs.merged >refdocs.clean &&
    jsonl-merge -q --shuffle --seed 1234 refdocs.clean |
    bpe-encode -q --append-eod | idx-pack -q -o refdocs
dataset refdocs withdocs/t_text_document "it equals jsonl-merge of the pages and DOCS in the one-shot pipeline"
n=$(gzip -dc docs/b-kjv.jsonl.gz | wc -l)
like withdocs/t.summary "^docs +$((n + 2)) documents" "the summary counts the documents in hand"
is "$(cat withdocs/4-dedup/docs.*.drop | grep -c '"exact duplicate"')" 1 \
    "the repeated chapter is an exact duplicate"
# A file added to DOCS: the documents are merged and cut again, only
# their units cleaned, nothing fetched.
cp docs/c-repeat.jsonl docs/d-again.jsonl
run mk withdocs 3 -n DOCS=docs
unlike out 'owt-stage (filter|chunk|fetch) ' "make -n after adding a document: nothing is fetched"
like out 'owt-stage docs withdocs/2-docs/all.jsonl docs' "the documents are merged again"
is "$(grep -c 'owt-stage clean ' out)" 3 "and only their three units are cleaned"
# DOCS alone, no URL lists.
run mk onlydocs 2 URLS=none DOCS=docs
is "$rc" 0 "DOCS without URL files builds"
jsonl-merge -q docs | owt-dedup -q | jsonl-merge -q --shuffle --seed 1234 |
    bpe-encode -q --append-eod | idx-pack -q -o refonly
dataset refonly onlydocs/t_text_document "it equals the one-shot pipeline on the documents"
rm -r docs

# kill -9 of the whole run (its process group) during fetch, during dedup
# What the outputs were made with (OUT/0-vars): a new SEED shuffles and
# packs again, nothing before; DECONTAM left out drops the decontam pass;
# a URL file removed leaves the dataset, with nothing fetched or cleaned.
run mk four 4 -n SEED=7
is "$(grep -c -E 'owt-stage (filter|chunk|fetch|clean|dedup|drop) ' out)" 0 \
    "make -n SEED=7: nothing is fetched, cleaned or deduplicated again"
like out 'owt-stage shuffle ' "the documents are shuffled again"
run mk four 4 -j2 SEED=7
jsonl-merge -q --shuffle --seed 7 ref5.clean | bpe-encode -q --append-eod |
    idx-pack -q -o ref5s7
dataset ref5s7 four/t_text_document "SEED=7 gives the one-shot pipeline's bytes with --seed 7"
run mk dec 2 -j2
dataset ref5 dec/t_text_document "DECONTAM left out: the dataset without decontamination"
mv urls/e.txt e.txt
run mk four 4 -n
is "$(grep -c -E 'owt-stage (filter|chunk|fetch|clean) ' out)" 0 \
    "make -n with e.txt removed: nothing is fetched or cleaned"
like out 'owt-stage dedup ' "the dedup runs again"
run mk four 4 -j2
dataset ref four/t_text_document "e.txt removed (and SEED back): the four files' dataset"
cp e.txt urls/e.txt

# and during pack; each time the same command goes on; the end result
# equals the uninterrupted build.
rm urls/e.txt
FETCH="--allow-private --delay 0.25"
kill_when() {	# TEST DESC: start a run, kill -9 it once TEST holds
	# A session of its own, whose id (the shell's pid: setsid may fork)
	# names the process group of the run.
	rm -f kill.pgid
	setsid sh -c 'echo $$ >kill.pgid; exec make -s -f "$0" URLS=urls \
	    OUT=kill SHARDS=2 NAME=t FETCH_FLAGS="$1" -j2 >kill.out 2>&1' \
	    "$MK" "$FETCH" &
	spid=$!
	i=0
	while [ ! -s kill.pgid ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
	g=$(cat kill.pgid 2>/dev/null)
	[ -n "$g" ] || g=$spid
	i=0
	while [ $i -lt 1000 ]; do
		eval "$1" && break
		kill -0 -$g 2>/dev/null || break
		sleep 0.02
		i=$((i + 1))
	done
	if kill -KILL -$g 2>/dev/null; then
		ok "$2: killed"
	else
		not_ok "$2: killed (the run had ended)"
		echo "# process group $g; condition '$1' after $i tries; the run said:"
		tail -n 5 kill.out | sed 's/^/# /'
	fi
	while kill -0 -$g 2>/dev/null; do sleep 0.02; done
	wait $spid 2>/dev/null
}
part=kill/2-fetch/b.txt.1-of-2.part
kill_when "test -s $part/log" "during fetch"
test -s $part/pages && ok "a fetch was left half done, to resume" ||
    not_ok "a fetch was left half done, to resume"
kill_when 'test -d kill/4-dedup' "during the clean and dedup steps"
kill_when 'test -d kill/8-pack' "during pack"
run mk kill 2 -j2
is "$rc" 0 "the same command again completes the dataset"
dataset one/t_text_document kill/t_text_document "after three kills, the same bytes"
ls -d kill/*/*.tmp 2>/dev/null >left
same left /dev/null "no temporary is left"

# Two runs at once: the second refuses at once, or waits with WAIT.
rm -rf kill
sh -c 'exec make -s -f "$0" URLS=urls OUT=kill SHARDS=2 NAME=t \
    FETCH_FLAGS="$1" >first.out 2>&1' "$MK" "$FETCH" &
first=$!
i=0
while [ ! -d kill/2-fetch ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
run mk kill 2
is "$rc" 2 "a second run while one holds the lock exits 2"
like err "^owt.mk: 'kill' is being built by another run$" "it says why"
run mk kill 2 WAIT=300
is "$rc" 0 "with WAIT it waits for the first and exits 0"
wait $first
is "$?" 0 "the first run completes"
dataset one/t_text_document kill/t_text_document "and the dataset is whole"

# Slurm: the job files, run as Slurm would (each array task with its
# SLURM_ARRAY_TASK_ID, the jobs in order), give the same bytes; submit
# chains them with afterok.
FETCH="--allow-private --delay 0.01"
run mk slurm 3 slurm
is "$rc" 0 "make slurm writes the job files"
is "$(ls slurm/slurm | tr '\n' ' ')" \
    "1-split.sh 2-shard-fetch.sh 3-dedup.sh 4-shard-drop.sh 5-shuffle.sh 6-shard-pack.sh 7-all.sh submit " \
    "one job file a step, and submit"
like slurm/slurm/2-shard-fetch.sh '^#SBATCH --array=0-2$' "a shard step is an array of 3 tasks"
like slurm/slurm/2-shard-fetch.sh 'K="\$SLURM_ARRAY_TASK_ID" shard-fetch$' "each task its shard"
unlike slurm/slurm/3-dedup.sh '^#SBATCH --array' "a global step is one job"
for f in slurm/slurm/[0-9]*.sh; do
	if grep -q '^#SBATCH --array' "$f"; then
		for k in 0 1 2; do
			SLURM_ARRAY_TASK_ID=$k sh "$f" >>slurm.out 2>&1 || echo "$f $k" >>failed
		done
	else
		sh "$f" >>slurm.out 2>&1 || echo "$f" >>failed
	fi
done
[ -f failed ] && { not_ok "every job succeeds"; sed 's/^/# /' failed; } ||
    ok "every job succeeds"
dataset one/t_text_document slurm/t_text_document "the jobs give the same bytes"
mkdir bin
cat >bin/sbatch <<'EOF'
#!/bin/sh
n=$(($(cat "$0.n" 2>/dev/null || echo 100) + 1))
echo $n >"$0.n"
echo "$*" >>"$0.log"
echo "$n;cluster"	# --parsable: ID;CLUSTER
EOF
chmod +x bin/sbatch
run env PATH="$PWD/bin:$PATH" sh slurm/slurm/submit
is "$rc" 0 "submit runs sbatch"
is "$(cat out)" "107;cluster" "and prints what sbatch said of the last job"
sed "s|$PWD/||g" bin/sbatch.log >calls
cat >want <<'EOF'
--parsable slurm/slurm/1-split.sh
--parsable --dependency=afterok:101 slurm/slurm/2-shard-fetch.sh
--parsable --dependency=afterok:102 slurm/slurm/3-dedup.sh
--parsable --dependency=afterok:103 slurm/slurm/4-shard-drop.sh
--parsable --dependency=afterok:104 slurm/slurm/5-shuffle.sh
--parsable --dependency=afterok:105 slurm/slurm/6-shard-pack.sh
--parsable --dependency=afterok:106 slurm/slurm/7-all.sh
EOF
same calls want "each job waits for the one before"

# A URL appended to a list: its unit keeps what it fetched and fetches
# the new URL alone (and robots.txt).
echo "$B/$(sed -n 37p all.txt | sed 's|.*/||')" >>urls/a.txt
run mk one 1 -n
grep -E 'owt-stage (filter|fetch) ' out | sed "s|.*owt-stage ||" >fetches
printf '%s\n' 'filter urls/a.txt one/1-filter/a.txt' 'fetch one/2-fetch/a.txt.0-of-1' >want
same fetches want "make -n after a URL is appended: its unit is fetched"
nreq=$(wc -l <"$T/req.log")
run mk one 1
is "$rc" 0 "the build with one more URL"
tail -n +$((nreq + 1)) "$T/req.log" | sed 's/^[^ ]* //' | sort >got
printf '%s\n' /address-13-0.html /robots.txt >want
same got want "only the new URL is fetched"
run oneshot ref6 urls/a.txt urls/b.txt urls/c.txt urls/d.txt
dataset ref6 one/t_text_document "it equals the one-shot pipeline on the longer list"

# The fetch step puts a unit's pages in URL order: here a killed fetch
# left them out of order, one twice (the second copy goes), one cut short
# (fetched again, here not: the log has every URL) and one of a URL the
# list does not hold (left out, with a warning).
u=ord/x.txt.0-of-1
mkdir -p $u.part
printf '%s\n' "$B/a" "  $B/b" '{"url":"'"$B/c"'","src":1}' >$u.urls
for p in c:C other:O a:A c:again b:B; do
	printf '{"url":"%s","text":"%s"}\n' "$B/${p%:*}" "${p#*:}"
done >$u.part/pages
printf '{"url":"%s/z' "$B" >>$u.part/pages
for p in a b c; do printf '{"url":"%s","outcome":"ok"}\n' "$B/$p"; done >$u.part/log
run env FETCH_FLAGS=--allow-private sh "$OWT_SRC/contrib/install/owt-stage" fetch $u
is "$rc" 0 "owt-stage fetch resumes a unit with nothing left to fetch"
for p in a:A:1 b:B:2 c:C:3; do
	q=${p#*:}
	printf '{"url":"%s","text":"%s","adlr_id":"x.txt.0-of-1-000000000%s"}\n' \
	    "$B/${p%%:*}" "${q%:*}" "${p##*:}"
done >want
same $u.jsonl want "the pages in URL order, each once, named"
like err "^owt-stage: '$u.part/pages': 1 records of URLs not in '$u.urls' left out\$" \
    "a page of a URL not in the list is counted"
is "$(ls ord)" "x.txt.0-of-1.jsonl
x.txt.0-of-1.log
x.txt.0-of-1.urls" "the work folder is gone, the log stays"

# make demo's data stages (contrib/demo 10 and 20: the recipe, two
# shards, over a site and documents in hand) give the one-shot pipeline's
# bytes on the same pages and documents.
mkdir demo
run env DEMO="$T/demo" DATA="$OWT_SRC/contrib/demo/data" sh -c \
    'sh "$OWT_SRC/contrib/demo/10-site.sh" && sh "$OWT_SRC/contrib/demo/20-dataset.sh"'
is "$rc" 0 "make demo's stages 10 and 20 run"
like out '^deduped +[0-9]+ documents' "and print the recipe's summary"
# The stage stopped its server: the same pages again from this one.
httpd_stop
httpd_start demo/www -t 120
sed "s|^http://127\.0\.0\.1:[0-9]*/|$B/|" demo/urls/site.txt |
    owt-fetch -q --allow-private --delay 0 --connections 1 --workers 0 >demo.pages &&
    jsonl-merge -q --add-id ref demo.pages demo/docs >demo.merged &&
    owt-dedup -q demo.merged | jsonl-merge -q --shuffle --seed 1234 |
    bpe-encode -q --append-eod | idx-pack -q -o demo.ref
dataset demo.ref demo/data/owt_text_document "make demo's dataset equals the one-shot pipeline's"
# Usage errors.
run mk bad 0
is "$rc" 2 "SHARDS=0 exits 2"
like err 'SHARDS=0: not a count of 1 or more' "it says so"
run mk four 4 K=4 shard-fetch
is "$rc" 2 "K=4 of 4 shards exits 2"
like err 'K=4: not a shard of 0 to 3' "it says so"
run make -s -f "$MK" URLS=none OUT=bad
is "$rc" 2 "no URL files exits 2"
like err "^owt.mk: no URL files in 'none', no WARCS and no DOCS$" "it says so"
mkdir -p baddocs
printf '{"text": "a"}\nnot json\n' >baddocs/x.jsonl
run make -s -f "$MK" URLS=none DOCS=baddocs OUT=bad
is "$rc" 2 "a bad record in DOCS: the run fails (make's 2)"
like err "^jsonl-merge: baddocs/x.jsonl:2: invalid JSON" "jsonl-merge names the file and line"
is "$(ls bad | grep -c text_document)" 0 "and no dataset is published"
mkdir -p clash
: >clash/docs
run make -s -f "$MK" URLS=clash DOCS=docs OUT=bad
is "$rc" 2 "a URL file named docs with DOCS exits 2"
like err "owt.mk: a URL file named 'docs' and DOCS: rename the file" "it says so"
done_testing
