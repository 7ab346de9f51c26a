#!/bin/sh
# The foundation library's unit tests (t/unit-lib.c): UTF-8, lines,
# the token stream and the shuffle.
exec "${OWT_BUILD:-build}/t/unit-lib"
