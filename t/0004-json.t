#!/bin/sh
# The JSON layer's unit tests (t/unit-json.c): documents as a tree with
# "byte N: what" errors, and string literals.
exec "${OWT_BUILD:-build}/t/unit-json"
