#!/bin/sh
# lib/pretok's unit tests (t/unit-pretok.c): PCRE2's \p{L}, \p{N} and \s
# as the patterns are translated equal Unicode 16's (lib/uniclass, the
# tables of tiktoken's engine) for every code point; U+0085 is white
# space, U+FEFF is not; invalid UTF-8 is a piece; bad patterns refused.
exec "${OWT_BUILD:-build}/t/unit-pretok"
