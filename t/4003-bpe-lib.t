#!/bin/sh
# lib/tok/bpe's unit tests (t/unit-bpe.c): the default vocabulary, the
# pre-tokenizer's pieces, known ids, decoding, any bytes round-trip, long
# pieces against tiktoken's merge written out, threads.
exec "${OWT_BUILD:-build}/t/unit-bpe"
