#!/bin/sh
# The generation library (t/unit-sample.c): the few-row and int8 matrix
# products against double sums, rows independent of the batch and the
# thread count, inference with the key/value cache against the full
# forward pass, and the sampler's allowed sets and frequencies.
exec "${OWT_BUILD:-build}/t/unit-sample"
