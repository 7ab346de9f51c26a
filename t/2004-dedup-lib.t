#!/bin/sh
# owt-dedup's library (t/unit-dedup.c): stages, document names, signatures,
# dedup_check, the report lines and --drop, decontam's tasks, split ids and
# second pass, one document through clean_doc_run and clean_order.
exec "${OWT_BUILD:-build}/t/unit-dedup"
