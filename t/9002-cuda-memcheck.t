#!/bin/sh
# compute-sanitizer's memcheck over every CUDA launcher (t/unit-cuda
# launchers: the fp32 pass, small shapes): no out-of-bounds or misaligned
# access, no leak of device memory, no CUDA API error.
u="${OWT_BUILD:-build}/t/unit-cuda"
[ -x "$u" ] || { echo "1..0 # SKIP built without CUDA (no t/unit-cuda)"; exit 0; }
cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
[ -n "$cs" ] || { echo "1..0 # SKIP no compute-sanitizer"; exit 0; }
out=$("$u" launchers 2>&1)
case $out in "1..0 # SKIP"*) echo "$out"; exit 0;; esac
log=$(mktemp) || exit 3
"$cs" --tool memcheck --leak-check full --error-exitcode 9 "$u" launchers \
    >"$log" 2>&1
rc=$?
echo "1..2"
if [ $rc -eq 0 ]; then echo "ok 1 - memcheck: no errors"; else
	echo "not ok 1 - memcheck: status $rc"; fi
if grep -q '^not ok' "$log"; then echo "not ok 2 - the launchers' own tests under memcheck"
else echo "ok 2 - the launchers' own tests pass under memcheck"; fi
grep -E 'ERROR SUMMARY|Invalid|leak|not ok' "$log" | head -n 20 | sed 's/^/# /'
rm -f "$log"
[ $rc -eq 0 ]
