#!/bin/sh
# The indexed dataset library (t/unit-mmidx.c): Megatron's byte-exact
# vectors, sentence mode, int32, merging, statistics, corrupt indices.
exec "${OWT_BUILD:-build}/t/unit-mmidx"
