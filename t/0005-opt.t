#!/bin/sh
# Options declared once (t/unit-opt.c, lib/core/opt.h): a sample table's usage
# line and -h bytes, every value error's message, given[], aliases,
# repeats, OPT_NOTE, and owt_options' exits.
exec "${OWT_BUILD:-build}/t/unit-opt"
