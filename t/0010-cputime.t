#!/bin/sh
# contrib/bench/cputime, the benchmarks' timer: its calls refused (exit 2,
# the command not run), a command that cannot be run (127), the command's
# own exit status and signal passed on, and its figures: four fields to
# the microsecond, CPU seconds at least what a busy loop counted of its
# own (its children's too, waited for by a shell), a peak RSS at least
# the memory a process touched.
. "${OWT_SRC:-.}/t/lib.sh"

ct=$OWT_BUILD/bench/cputime
cd "$T" || exit 3

fails 2 '^usage: cputime -o FILE COMMAND \[ARG\.\.\.\]$' "no command" "$ct" -o f
fails 2 '^usage: cputime -o FILE' "a flag other than -o" "$ct" -x f true
fails 2 '^cputime: no/such/f: No such file or directory$' \
    "a FILE that cannot be written" "$ct" -o no/such/f touch ran
is "$(ls ran 2>/dev/null)" "" "the command is not run for figures that cannot be kept"
fails 127 '^cputime: no-such-command: No such file or directory$' \
    "a command that cannot be run" "$ct" -o f no-such-command
run "$ct" -o f sh -c 'exit 7'
is "$rc" 7 "the command's exit status"
like f '^[0-9]+\.[0-9]{6} [0-9]+ [0-9]+\.[0-9]{6} [0-9]+\.[0-9]{6}$' \
    "wall seconds, peak KB, user and system seconds, to the microsecond"
run "$ct" -o f sh -c 'kill -TERM $$'
is "$rc" 143 "a command killed by SIGTERM: 128 + 15"

# A loop that spins until times() says it has had 0.3 s of CPU: the
# figure counts at least that, here through a shell that waits for it.
busy='my $t0 = (times)[0] + (times)[1]; 1 while (times)[0] + (times)[1] - $t0 < 0.3'
run "$ct" -o f sh -c "perl -e '$busy'; true"
is "$rc" 0 "a busy loop under a shell"
is "$(awk '{ print ($3 + $4 >= 0.3 && $1 >= $3 + $4 - 0.05) ? "yes" : $0 }' f)" yes \
    "CPU seconds at least the loop's own (0.3), its shell's child's included; wall not less"

# 64 MB touched: a peak RSS of at least 65,536 KB.
run "$ct" -o f perl -e '$x = "a" x (64 << 20); print length $x'
is "$(cat out)" 67108864 "the command's output is its own"
is "$(awk '{ print ($2 >= 65536 ? "yes" : $2) }' f)" yes "peak RSS at least the 64 MB touched"

done_testing
