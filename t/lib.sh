# lib.sh - TAP helpers for the shell tests: . "$OWT_SRC/t/lib.sh" (or ./t/lib.sh)
#
# run CMD...            run CMD, stdout to $T/out, stderr to $T/err, status in $rc
# is GOT WANT DESC      pass when the two strings are equal
# same FILE1 FILE2 DESC pass when the files are byte-identical (diff on failure)
# like FILE ERE DESC    pass when a line of FILE matches the extended regex
# unlike FILE ERE DESC  pass when no line of FILE matches
# fails STATUS ERE DESC CMD...  run CMD; two tests: it exits STATUS, and a
#                       line of its stderr matches ERE
# no_threads N DESC CMD...  run CMD, given --workers N, where N threads of a
#                       1 GB stack cannot start (ulimit -s and -v: 3 GB of
#                       address space); two tests, as fails: exit 3 and
#                       "PROG: cannot start N threads: ...". Skipped in a
#                       sanitizer build (ASan's shadow needs terabytes of
#                       address space) or where the limits cannot be set
# none_left PREFIX DESC pass when no file PREFIX.* (a dataset or a
#                       temporary) exists
# json_lines FILE DESC  pass when every line of FILE is one JSON value, as
#                       Python's json.loads reads it (no NaN nor Infinity);
#                       skipped without /usr/bin/python3
# await FILE ERE [SECS] wait until a line of FILE matches ERE, at most SECS
#                       seconds (20); the tests after it tell what came
# ok DESC / not_ok DESC / skip DESC
# need_shared           skip the whole script, or the rest of it where tests
#                       ran before (one skip), when ../shared is absent
# need_mpi [WHAT]       skip the rest of the script (one skip naming WHAT
#                       where tests ran before) without mpirun and the MPI
#                       plugin; set OpenMPI up for tests (root, containers)
# mpi_env               OpenMPI set up as need_mpi does, or status 1 and the
#                       reason in $mpi_why, for a script that goes on;
#                       $mpi_asan: ASAN_OPTIONS for a process that starts
#                       MPI (whose leaks are OpenMPI's), as mpi_launch's are
# alone CMD...          run CMD (which may start VAR=VALUE) without the
#                       launcher's variables of the environment this runs in
# mpi_launch N CMD...   CMD as N ranks under mpirun, at most $mpi_secs
#                       seconds (120): a hang fails instead of holding the
#                       suite (fails STATUS ERE DESC mpi_launch N CMD...)
# mpi_run N CMD...      run mpi_launch N CMD...
# done_testing          print the plan; exit 1 if anything failed
# $T is a scratch directory, removed at exit.

set -u
LC_ALL=C.UTF-8
export LC_ALL
: "${OWT_SRC:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${OWT_BUILD:=$OWT_SRC/build}"
: "${OWT_SHARED:=$OWT_SRC/../shared}"
PATH="$OWT_BUILD/bin:$PATH"
export OWT_SRC OWT_BUILD OWT_SHARED PATH

tap_n=0
tap_failed=0
T=$(mktemp -d "${TMPDIR:-/tmp}/owt-test.XXXXXX") || exit 3
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}

not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
}

skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n # SKIP $*"
}

skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

need_shared() {
	[ -d "$OWT_SHARED/data" ] && return
	# after tests that need no data: one skip for the rest
	[ "$tap_n" -eq 0 ] && skip_all "no ../shared test data"
	skip "no ../shared test data: the rest of the script"
	done_testing
}

# The variables by which mpirun, PMI and srun tell a process its rank
# (lib/comm/comm.c's comm_launch).
launcher_vars="OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_RANK PMI_SIZE PMI_RANK
SLURM_STEP_NUM_TASKS SLURM_PROCID PMIX_RANK"

alone() {
	(unset $launcher_vars; exec env "$@")
}

# mpi_env: 0 with OpenMPI's environment set for tests, or 1 with the
# reason in $mpi_why (no mpirun, or no MPI plugin in this build).
mpi_env() {
	if ! command -v mpirun >/dev/null 2>&1; then
		mpi_why="no mpirun (openmpi-bin)"
		return 1
	fi
	if [ ! -f "$OWT_BUILD/lib/owt/comm-mpi.so" ]; then
		mpi_why="no $OWT_BUILD/lib/owt/comm-mpi.so (libopenmpi-dev)"
		return 1
	fi
	. "$OWT_SRC/t/ompi.sh"
	# A test's mpirun starts a world of its own, not ranks of one this
	# suite may run in.
	unset $launcher_vars
	# OpenMPI's own allocations are not the program's leaks: ranks, and a
	# process that starts MPI, run with $mpi_asan; a world of one (no
	# MPI in the process) keeps leak detection.
	mpi_asan=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
}

need_mpi() {
	if ! mpi_env; then
		[ "$tap_n" -eq 0 ] && skip_all "$mpi_why"
		skip "$mpi_why: ${1:-the rest of the script}"
		done_testing
	fi
}

# need_cuda_train: skip the whole script unless gpt-train trains on a
# CUDA device here (a build without CUDA, or no device); any other
# failure of that first step bails out.
need_cuda_train() {
	run gpt-train --device cuda --mock-data --train-iters 1 --num-layers 1 \
	    --hidden-size 32 --num-attention-heads 2 --seq-length 8 \
	    --max-position-embeddings 8 --vocab-size 64 --eval-iters 0 -q
	if [ "$rc" -ne 0 ]; then
		grep -Eq 'no CUDA device|no CUDA backend' "$T/err" &&
		    skip_all "$(cat "$T/err")"
		echo "Bail out! gpt-train --device cuda: $(cat "$T/err")"
		exit 1
	fi
}

mpi_launch() {
	_np=$1
	shift
	ASAN_OPTIONS=$mpi_asan timeout "${mpi_secs:-120}" \
	    mpirun -np "$_np" --bind-to none "$@"
}

mpi_run() {
	run mpi_launch "$@"
}

run() {
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
}

is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3"
		echo "# got:  '$1'"
		echo "# want: '$2'"
	fi
}

same() {
	if cmp -s "$1" "$2"; then
		ok "$3"
	else
		not_ok "$3"
		diff -u "$1" "$2" 2>&1 | head -n 40 | sed 's/^/# /'
	fi
}

like() {
	if grep -Eq -- "$2" "$1"; then
		ok "$3"
	else
		not_ok "$3"
		echo "# no line matches /$2/ in:"
		head -n 20 "$1" | sed 's/^/#   /'
	fi
}

unlike() {
	if grep -Eq -- "$2" "$1"; then
		not_ok "$3"
		grep -E -- "$2" "$1" | head -n 5 | sed 's/^/#   /'
	else
		ok "$3"
	fi
}

fails() {
	_want=$1 _re=$2 _what=$3
	shift 3
	run "$@"
	is "$rc" "$_want" "$_what exits $_want"
	like "$T/err" "$_re" "$_what is reported"
}

no_threads() {
	_n=$1 _what=$2 _why=
	shift 2
	grep -q __asan_init "$OWT_BUILD/bin/$1" 2>/dev/null &&
	    _why="a sanitizer build (its shadow needs the address space)"
	[ -n "$_why" ] ||
	    (ulimit -s 1048576 && ulimit -v 3000000) 2>/dev/null ||
	    _why="cannot set ulimit -s 1048576 and ulimit -v 3000000"
	if [ -n "$_why" ]; then
		skip "$_what exits 3: $_why"
		skip "$_what is reported: $_why"
		return
	fi
	fails 3 "^$1: cannot start $_n threads: Resource temporarily unavailable\$" \
	    "$_what" sh -c 'ulimit -s 1048576 && ulimit -v 3000000 && exec "$@"' \
	    sh "$@"
}

none_left() {
	if ls "$1".* >/dev/null 2>&1; then
		not_ok "$2"
		ls "$1".* | sed 's/^/#   left: /'
	else
		ok "$2"
	fi
}

json_lines() {
	if [ ! -x /usr/bin/python3 ]; then
		skip "no /usr/bin/python3: $2"
		return
	fi
	if /usr/bin/python3 -c '
import json, sys
def bad(s):
    raise ValueError("not JSON: " + s)
for n, l in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    try:
        json.loads(l, parse_constant=bad)
    except ValueError as e:
        print("#   line %d: %s" % (n, e))
        sys.exit(1)
' "$1"; then
		ok "$2"
	else
		not_ok "$2"
	fi
}

await() {
	_i=$((${3:-20} * 20))
	while [ "$_i" -gt 0 ] && ! grep -Eq -- "$2" "$1" 2>/dev/null; do
		sleep 0.05
		_i=$((_i - 1))
	done
}

done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
	exit $?
}

# npm_pinned NAME MODULE [FILE...]: the npm packages locked in t/NAME/
# (package.json, package-lock.json) installed once into
# $OWT_BUILD/t/npm-NAME (again when the lock changes), MODULE among them;
# the FILEs of t/NAME/ copied beside them (scripts that import them).
# Status 1 and the reason in $npm_why without node, npm or the registry.
npm_pinned() {
	_src=$OWT_SRC/t/$1 _dir=$OWT_BUILD/t/npm-$1 _mod=$2
	shift 2
	npm_why=
	command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || {
		npm_why="no node or npm"
		return 1
	}
	if ! cmp -s "$_src/package-lock.json" "$_dir/package-lock.json" ||
	    [ ! -d "$_dir/node_modules/$_mod" ]; then
		rm -rf "$_dir.$$" &&
		mkdir -p "$_dir.$$" &&
		cp "$_src/package.json" "$_src/package-lock.json" "$_dir.$$/" &&
		(cd "$_dir.$$" && timeout 300 npm ci --no-audit --no-fund \
		    --loglevel=error) >"$T/npm.log" 2>&1 || {
			rm -rf "$_dir.$$"
			npm_why="npm could not install $_mod (no registry?)"
			return 1
		}
		rm -rf "$_dir"
		mv "$_dir.$$" "$_dir" 2>/dev/null || rm -rf "$_dir.$$"
	fi
	for _f in "$@"; do
		cp "$_src/$_f" "$_dir/" || return 1
	done
}
