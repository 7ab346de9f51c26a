#!/bin/sh
# lib/bpe's unit tests (t/unit-bpe.c): the default vocabulary, the
# pre-tokenizer's pieces, known ids, decoding, any bytes round-trip, threads.
exec "${OWT_BUILD:-build}/t/unit-bpe"
