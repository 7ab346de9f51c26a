# owt.mk - build a Megatron dataset from folders of URL lists, in shards
#
#   make -f /usr/local/share/owt/owt.mk URLS=urls OUT=data SHARDS=64 \
#       NAME=my-gpt2 -j16
#
# gives OUT/NAME_text_document.bin and .idx; see owt(7) for the stages, the
# files each leaves in OUT, Slurm, and cron. ENCODE_FLAGS pass bpe-encode's
# flags through, its tokenizer's among them (ENCODE_FLAGS='--tokenizer-type
# Llama2Tokenizer --tokenizer-model /abs/tokenizer.model'; t/8006). The unit of work is a chunk of
# one URL file: chunk K of N holds lines K*L/N+1 to (K+1)*L/N of the file's
# kept URLs, so the chunks of the files taken by name and in order are the
# URLs in order; every step up to the global passes runs per unit, and the
# global passes read the units in that order. The shard count therefore
# never changes the dataset. Pages in WARC archives (WARCS: owt-fetch
# --extract reads them instead of fetching) follow the URLs' pages, cut
# the same way into units warc.K-of-N; documents already in hand (DOCS)
# follow them, as units docs.K-of-N. Every step publishes its
# output by rename, the outputs before the file that says the step is done
# (the target, or a marker a later run trusts: 5-final/UNIT.drop, N.done),
# and removes such a marker before it replaces the output the marker
# vouches for; t/8004 kills a build after each rename and link in turn.
# The public targets hold OUT/.lock (flock) for the whole run.

OWT_MK := $(lastword $(MAKEFILE_LIST))
.DEFAULT_GOAL := all
OWT_STAGE ?= sh $(dir $(OWT_MK))owt-stage

URLS ?= urls
OUT ?= data
SHARDS ?= 1
NAME ?= owt
SEED ?= 1234
DOCS ?=
WARCS ?=
DECONTAM ?=
WAIT ?=
FETCH_FLAGS ?=
MERGE_FLAGS ?=
DEDUP_FLAGS ?=
ENCODE_FLAGS ?=
PACK_FLAGS ?=
export FETCH_FLAGS MERGE_FLAGS DEDUP_FLAGS ENCODE_FLAGS PACK_FLAGS SEED
override URLS := $(patsubst %/,%,$(URLS))
override OUT := $(patsubst %/,%,$(OUT))

ifneq ($(shell [ '$(SHARDS)' -ge 1 ] 2>/dev/null && echo ok),ok)
$(error SHARDS=$(SHARDS): not a count of 1 or more)
endif
N := $(SHARDS)
KS := $(shell seq 0 $$(($(N) - 1)))

# The URL files, by name in byte order (make's sort is strcmp's).
FILES := $(sort $(notdir $(shell [ -d '$(URLS)' ] && \
	find '$(URLS)/' -maxdepth 1 -type f ! -name '.*' 2>/dev/null)))
URL_UNITS := $(foreach f,$(FILES),$(foreach k,$(KS),$(f).$(k)-of-$(N)))
UNITS := $(URL_UNITS)

# WARCS: WARC archives, and folders of them (their files by name), whose
# pages join the fetched ones, after them, in the order given: extracted
# once (2-warc/all.jsonl), then cut into N units like DOCS. Their files
# are the prerequisites of the extraction: an archive added or changed
# redoes the archives' units and the global steps, not the fetches.
ifneq ($(strip $(WARCS)),)
ifneq ($(filter warc,$(FILES)),)
$(error owt.mk: a URL file named 'warc' and WARCS: rename the file)
endif
WARC_FILES := $(foreach w,$(WARCS),$(shell find '$(w)' -xtype f ! -name '.*' | \
	LC_ALL=C sort))
WARC_UNITS := $(KS:%=warc.%-of-$(N))
UNITS += $(WARC_UNITS)
endif

# DOCS: files and folders of documents (text, JSONL, as jsonl-merge reads
# them) that join the fetched pages, after them, in the order given. Their
# files are the prerequisites of the merge, so that adding or changing one
# redoes the documents' units and the global steps, not the fetches.
ifneq ($(strip $(DOCS)),)
ifneq ($(filter docs,$(FILES)),)
$(error owt.mk: a URL file named 'docs' and DOCS: rename the file)
endif
DOC_FILES := $(shell find $(DOCS) -xtype f ! -name '.*' | LC_ALL=C sort)
DOC_UNITS := $(KS:%=docs.%-of-$(N))
UNITS += $(DOC_UNITS)
endif

CLEAN := $(UNITS:%=$(OUT)/3-clean/%.jsonl)
SIGS := $(UNITS:%=$(OUT)/3-clean/%.sig)
DROPS := $(OUT)/4-dedup/drops.jsonl
FINAL := $(UNITS:%=$(OUT)/5-final/%.jsonl)
DECON := $(if $(strip $(DECONTAM)),$(OUT)/6-decontam/all.jsonl)
SHUFFLED := $(OUT)/7-shuffle/$(N).done
PACKS := $(KS:%=$(OUT)/8-pack/%-of-$(N).idx)
DATASET := $(OUT)/$(NAME)_text_document
SUMMARY := $(OUT)/$(NAME).summary

# What the outputs were made with: OUT/0-vars/VAR holds the value of VAR
# at the last run (for UNITS and DOC_FILES, the list of units and of the
# documents' files). A run that finds another value rewrites the file, and
# make redoes the steps that depend on it, only those: a new SEED
# reshuffles and repacks, a URL file removed redoes the dedup on, a
# DEDUP_FLAGS change cleans again. FETCH_FLAGS has none: a change of
# politeness or workers must not fetch a crawl again.
V := $(OUT)/0-vars
STAMPED := UNITS DOCS DOC_FILES WARCS WARC_FILES SEED DECONTAM MERGE_FLAGS DEDUP_FLAGS \
	ENCODE_FLAGS PACK_FLAGS
same = $(and $(findstring x$(1),x$(2)),$(findstring x$(2),x$(1)))
$(foreach v,$(STAMPED),$(if $(and $(wildcard $(V)/$(v)),$(call same,$(strip \
	$($(v))),$(strip $(file <$(V)/$(v))))),,$(eval $(V)/$(v): FORCE)))

# The units of shard K (Slurm's array task K): chunk K of every file.
K ?= 0
K_UNITS := $(foreach f,$(FILES),$(f).$(K)-of-$(N)) \
	$(if $(WARC_UNITS),warc.$(K)-of-$(N)) $(if $(DOC_UNITS),docs.$(K)-of-$(N))
ifneq ($(filter shard-% _shard-%,$(MAKECMDGOALS)),)
ifeq ($(filter $(K),$(KS)),)
$(error K=$(K): not a shard of 0 to $(lastword $(KS)))
endif
endif

# Public targets: each runs this file again as one run holding OUT/.lock,
# exclusively (all, and the global passes), or shared, with a lock of its
# own shard (the shard-* targets that Slurm's array tasks run). A run that
# finds the lock taken (flock exits 75) says so and fails, at once or
# after WAIT seconds.
LOCKWAIT = $(if $(WAIT),-w $(WAIT),-n) -E 75
LOCKED = mkdir -p '$(OUT)' && flock $(LOCKWAIT) '$(OUT)/.lock'
LOCKED_K = mkdir -p '$(OUT)' && flock -s $(LOCKWAIT) '$(OUT)/.lock' \
	flock $(LOCKWAIT) '$(OUT)/.lock-$(K)'
LOCKMSG = || { s=$$?; [ $$s -ne 75 ] || \
	echo "owt.mk: '$(OUT)' is being built by another run" >&2; exit $$s; }

.PHONY: FORCE all split dedup shuffle shard-fetch shard-drop shard-pack slurm \
	_all _split _dedup _shuffle _shard-fetch _shard-drop _shard-pack
.SUFFIXES:
.SECONDARY:
.DELETE_ON_ERROR:

all split dedup shuffle:
	@$(LOCKED) $(MAKE) -f '$(OWT_MK)' _$@ $(LOCKMSG)
shard-fetch shard-drop shard-pack:
	@$(LOCKED_K) $(MAKE) -f '$(OWT_MK)' _$@ $(LOCKMSG)

ifeq ($(UNITS),)
_all _split _shard-fetch _dedup _shard-drop _shuffle _shard-pack:
	@echo "owt.mk: no URL files in '$(URLS)', no WARCS and no DOCS" >&2; exit 1
else
_all: $(SUMMARY)
	@cat '$(SUMMARY)'
_split: $(STAMPED:%=$(V)/%) $(URL_UNITS:%=$(OUT)/2-fetch/%.urls) \
	$(WARC_UNITS:%=$(OUT)/2-warc/%.jsonl) $(DOC_UNITS:%=$(OUT)/2-docs/%.jsonl)
_shard-fetch: $(K_UNITS:%=$(OUT)/3-clean/%.jsonl)
_dedup: $(DROPS)
_shard-drop: $(K_UNITS:%=$(OUT)/5-final/%.jsonl)
_shuffle: $(SHUFFLED)
_shard-pack: $(OUT)/8-pack/$(K)-of-$(N).idx
endif

# make writes the value itself (a list can be longer than a command
# line may be), except under make -n.
dry = $(findstring n,$(firstword -$(MAKEFLAGS)))
FORCE:
$(V)/%:
	$(if $(dry),,$(shell mkdir -p '$(@D)')$(file >$@.tmp,$(strip $($*))))@mv -f $@.tmp $@

# 1. filter: each URL file's URLs that OpenWebText keeps (.log: the others).
$(OUT)/1-filter/%: $(URLS)/%
	@mkdir -p $(@D)
	$(OWT_STAGE) filter $< $@

# 2. fetch: a unit's URLs (.urls), its pages in URL order with ids, the
# outcome of every URL (.log); resumed after a kill.
.SECONDEXPANSION:
$(OUT)/2-fetch/%.urls: $(OUT)/1-filter/$$(basename $$*)
	@mkdir -p $(@D)
	$(OWT_STAGE) chunk $< $@

$(OUT)/2-fetch/%.jsonl: $(OUT)/2-fetch/%.urls
	$(OWT_STAGE) fetch $(@:.jsonl=)

# 2. warc (with WARCS): the archives' pages extracted once, in the order
# given (all.jsonl), then cut into N units like a URL file's chunks.
$(OUT)/2-warc/all.jsonl: $(WARC_FILES) $(V)/WARCS $(V)/WARC_FILES
	@mkdir -p $(@D)
	$(OWT_STAGE) warc $@ $(WARC_FILES)

$(OUT)/2-warc/$(N).done: $(OUT)/2-warc/all.jsonl
	$(OWT_STAGE) cut $< $(N) warc

$(WARC_UNITS:%=$(OUT)/2-warc/%.jsonl): $(OUT)/2-warc/$(N).done
	@:

# 2. docs (with DOCS): the documents merged once, in the order given
# (all.jsonl), then cut into N units like a URL file's chunks.
$(OUT)/2-docs/all.jsonl: $(DOC_FILES) $(V)/DOCS $(V)/DOC_FILES $(V)/MERGE_FLAGS
	@mkdir -p $(@D)
	$(OWT_STAGE) docs $@ $(DOCS)

# One pass cuts all N units (N.done last); a unit that comes out the same
# keeps its time, so that its cleaning is not redone.
$(OUT)/2-docs/$(N).done: $(OUT)/2-docs/all.jsonl
	$(OWT_STAGE) cut $< $(N) docs

$(DOC_UNITS:%=$(OUT)/2-docs/%.jsonl): $(OUT)/2-docs/$(N).done
	@:

# 3. clean: fix, lang, length per unit; the signatures (.sig) of what is
# kept, every decision (.report).
$(OUT)/3-clean/%.jsonl: $(OUT)/2-fetch/%.jsonl $(V)/DEDUP_FLAGS
	@mkdir -p $(@D)
	$(OWT_STAGE) clean $< $@

$(DOC_UNITS:%=$(OUT)/3-clean/%.jsonl): $(OUT)/3-clean/%.jsonl: $(OUT)/2-docs/%.jsonl \
		$(V)/DEDUP_FLAGS
	@mkdir -p $(@D)
	$(OWT_STAGE) clean $< $@

$(WARC_UNITS:%=$(OUT)/3-clean/%.jsonl): $(OUT)/3-clean/%.jsonl: $(OUT)/2-warc/%.jsonl \
		$(V)/DEDUP_FLAGS
	@mkdir -p $(@D)
	$(OWT_STAGE) clean $< $@

# 4. dedup: exact and near duplicates over all signatures, in URL order.
$(DROPS): $(CLEAN) $(V)/UNITS $(V)/DEDUP_FLAGS
	@mkdir -p $(@D)
	$(OWT_STAGE) dedup $(@D) $(SIGS)

# 5. final: each unit without its duplicates.
$(OUT)/5-final/%.jsonl: $(OUT)/3-clean/%.jsonl $(DROPS)
	@mkdir -p $(@D)
	$(OWT_STAGE) drop $< $(OUT)/4-dedup/$*.drop $@

# 6. decontam (with DECONTAM=task files): one pass over all the units.
$(OUT)/6-decontam/all.jsonl: $(FINAL) $(DECONTAM) $(V)/DECONTAM $(V)/DEDUP_FLAGS
	@mkdir -p $(@D)
	owt-dedup --stages decontam $(DECONTAM:%=--decontam %) \
	    --report $(@D)/report.jsonl.tmp $(DEDUP_FLAGS) $(FINAL) >$@.tmp
	mv -f $(@D)/report.jsonl.tmp $(@D)/report.jsonl
	mv -f $@.tmp $@

# 7. shuffle: all documents with SEED, cut into N shards K-of-N.jsonl.
$(SHUFFLED): $(or $(DECON),$(FINAL)) $(V)/SEED $(V)/MERGE_FLAGS $(V)/DECONTAM
	@mkdir -p $(@D)
	$(OWT_STAGE) shuffle $(@D) $(N) $(or $(DECON),$(FINAL))

# 8. pack: each shard encoded and packed; then one merge.
$(OUT)/8-pack/%.idx: $(SHUFFLED) $(V)/ENCODE_FLAGS $(V)/PACK_FLAGS
	@mkdir -p $(@D)
	$(OWT_STAGE) pack $(OUT)/7-shuffle/$*.jsonl $(@:.idx=)

$(DATASET).idx: $(PACKS) $(V)/PACK_FLAGS
	idx-pack --merge -f $(PACK_FLAGS) -o $(DATASET) $(PACKS:.idx=)

$(SUMMARY): $(DATASET).idx
	$(OWT_STAGE) summary $(OUT) $(NAME) $(N) >$@.tmp
	@mv -f $@.tmp $@

# Slurm: job files in OUT/slurm/, one per step, and OUT/slurm/submit,
# which sbatch-es them in order, each waiting for the one before (afterok);
# the shard steps are arrays of N tasks. SLURM_FLAGS go to every sbatch.
SLURM_FLAGS ?=
q = '$(subst ','\'',$(1))'
SLURM_MAKE = make -f $(call q,$(abspath $(OWT_MK))) URLS=$(call q,$(URLS)) \
	OUT=$(call q,$(OUT)) SHARDS=$(N) NAME=$(call q,$(NAME)) \
	SEED=$(call q,$(SEED)) DOCS=$(call q,$(DOCS)) WARCS=$(call q,$(WARCS)) \
	DECONTAM=$(call q,$(DECONTAM)) \
	FETCH_FLAGS=$(call q,$(FETCH_FLAGS)) MERGE_FLAGS=$(call q,$(MERGE_FLAGS)) \
	DEDUP_FLAGS=$(call q,$(DEDUP_FLAGS)) \
	ENCODE_FLAGS=$(call q,$(ENCODE_FLAGS)) PACK_FLAGS=$(call q,$(PACK_FLAGS))

slurm:
	@mkdir -p '$(OUT)/slurm'
	@SLURM_MAKE=$(call q,$(SLURM_MAKE)) SLURM_FLAGS=$(call q,$(SLURM_FLAGS)) \
	    $(OWT_STAGE) slurm '$(OUT)/slurm' $(N) '$(CURDIR)'
