#!/bin/sh
# The JSON layer's unit tests (t/unit-json.c): records (fast path and
# yajl alike, edits, errors), documents as a tree with
# "byte N: what" errors, the writer in its compact, spaced and pretty
# styles, strings (lossy too) and token ids.
exec "${OWT_BUILD:-build}/t/unit-json"
