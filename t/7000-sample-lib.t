#!/bin/sh
# The generation library (t/unit-sample.c): the few-row and int8 matrix
# products against double sums, rows independent of the batch and the
# thread count, inference with the key/value cache against the full
# forward pass, the sampler's allowed sets and frequencies, and chunked
# prefill: a prompt fed a chunk a step beside a running sample, and 24
# seeded samples at once each alone's tokens and logits, bit for bit.
exec "${OWT_BUILD:-build}/t/unit-sample"
