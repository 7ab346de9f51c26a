#!/bin/sh
# lib/warc.c (t/unit-warc.c): WARC headers, HTTP heads, chunks, content
# codings and sniffing, pure functions on bytes.
exec "${OWT_BUILD:-build}/t/unit-warc"
