# owt - the whole build: make, make check, make demo, make bench, make install
#
# Each program is cmd/NAME.c; cmd/NAME.mk names the pkg-config modules it
# links (PKGS_NAME) and adds the Debian packages it needs to DEB_PKGS.
# Everything else is lib/*/*.c (libowt.a) and, with CUDA, kernels/*.cu (the
# plugin lib/owt/gpt-cuda.so).

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/owt
DESTDIR ?=

CC ?= cc
CFLAGS ?= -O2 -g
SANITIZE ?= 0
CUDA ?= auto
SHARED ?= $(CURDIR)/../shared

ifeq ($(SANITIZE),1)
B ?= build-san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
else
B ?= build
SANFLAGS =
endif

# Debian packages the build and the tests need; cmd/*.mk add theirs.
DEB_PKGS = build-essential pkg-config mandoc time zstd zlib1g-dev libzstd-dev \
	libyajl-dev

PROGS := $(sort $(patsubst cmd/%.c,%,$(wildcard cmd/*.c)))
include $(wildcard cmd/*.mk)

ALL_PKGS = $(sort $(foreach p,$(PROGS),$(PKGS_$(p))))
ALL_LIBS = $(sort $(foreach p,$(PROGS),$(LIBS_$(p))))
OWT_CPPFLAGS = -Ilib -D_GNU_SOURCE -DOWT_DATADIR='"$(DATADIR)"' \
	$(shell pkg-config --cflags $(ALL_PKGS) 2>/dev/null)
OWT_CFLAGS = -std=gnu11 -Wall -Wextra -Wno-unused-parameter -pthread \
	$(SANFLAGS) $(CFLAGS)
OWT_CXXFLAGS = -std=c++11 -Wall -Wextra -Wno-unused-parameter -pthread \
	$(SANFLAGS) $(CFLAGS)

LIB_SRCS := $(filter-out lib/comm/comm_mpi.c,$(sort $(wildcard lib/*/*.c)))
LIB_CXX_SRCS := $(filter-out lib/tok/spm_plugin.cc,$(sort $(wildcard lib/*/*.cc)))
LIB_OBJS := $(patsubst %.c,$(B)/%.o,$(LIB_SRCS)) \
	$(patsubst %.cc,$(B)/%.o,$(LIB_CXX_SRCS))
LIB := $(B)/lib/libowt.a
BINS := $(addprefix $(B)/bin/,$(PROGS))

# Unit tests: t/unit-NAME.c -> $(B)/t/unit-NAME, run by a t/*.t script;
# other t/*.c are test helpers (t/httpd.c, the tests' HTTP server; the
# drivers run under mpirun). What they share is in headers, t/*.h (unit.h:
# TAP; rank.h: the drivers' errors), on which each of them depends.
UNIT_SRCS := $(sort $(wildcard t/*.c))

# GPU_ONLY=1 (make check-gpu): the GPU machine has a C compiler and the
# CUDA toolkit but no package registry, so only what the GPU tests run is
# built: the model library and the four programs that make and use a
# model. yajl, zlib, zstd and PCRE2 come from pkg-config or, where it finds
# none, from .gpu-kit/ (headers and static libraries that
# contrib/build/gpu-kit.sh copies from this machine's Debian packages).
GPU_PROGS = bpe-encode idx-pack gpt-train gpt-sample
GPU_LIB = core/batch core/buf core/sha256 core/input core/json core/jsonl core/opt \
	core/outfile core/par core/plugin core/progress core/tally core/utf8 core/util \
	comm/comm comm/comm_nccl tok/bpe tok/encode tok/hftok tok/mmidx tok/pack tok/pretok \
	tok/tiktoken tok/tok tok/chars \
	tok/tokenizer tok/uniclass tok/spm tok/spmtok \
	model/blas model/ckpt model/ckpt_tok model/gemv model/gpt model/gpt_cpu model/gpt_device \
	model/gpt_infer model/safetensors model/sgemm512 dist/dist dist/gpt_plan \
	dist/pipeline train/ckpt_args train/gpt_data train/mt19937 train/sampler \
	train/schedule train/train train/train_log train/train_prep train/train_run \
	gen/gen gen/gen_queue gen/sample gen/serve gen/serve_api
ifeq ($(GPU_ONLY),1)
# Where pkg-config knows no libmicrohttpd (the GPU machine), gpt-sample
# links .gpu-kit's (its shared library and those it needs, found by an
# old-style DT_RPATH, which unlike RUNPATH also serves the library's own
# needs), or without a kit is built without --listen (lib/serve.c's
# OWT_NO_MHD).
ifneq ($(shell pkg-config --exists libmicrohttpd 2>/dev/null && echo y),y)
PKGS_gpt-sample := $(filter-out libmicrohttpd,$(PKGS_gpt-sample))
ifneq ($(wildcard .gpu-kit/include/microhttpd.h),)
LIBS_gpt-sample += $(CURDIR)/.gpu-kit/lib/mhd/libmicrohttpd.so.12 \
	-Wl,--disable-new-dtags,-rpath,$(CURDIR)/.gpu-kit/lib/mhd
else
$(B)/lib/gen/serve.o: OWT_CPPFLAGS += -DOWT_NO_MHD
endif
endif
PROGS := $(GPU_PROGS)
LIB_OBJS := $(GPU_LIB:%=$(B)/lib/%.o)
BINS := $(addprefix $(B)/bin/,$(PROGS))
UNIT_SRCS := t/unit-cuda.c
ifneq ($(wildcard .gpu-kit/include),)
OWT_CPPFLAGS += -I$(CURDIR)/.gpu-kit/include
KIT_LIBS = $(CURDIR)/.gpu-kit/lib/libyajl_s.a \
	$(CURDIR)/.gpu-kit/lib/libzstd.a $(CURDIR)/.gpu-kit/lib/libz.a \
	$(CURDIR)/.gpu-kit/lib/libpcre2-8.a
# libunistring (hftok's NFC) has no pkg-config file: the kit's archive
# where there is a kit, else -lunistring as in the full build.
$(foreach p,bpe-encode gpt-train gpt-sample,$(eval LIBS_$(p) := \
	$(subst -lunistring,$(CURDIR)/.gpu-kit/lib/libunistring.a,$(LIBS_$(p)))))
endif
endif
UNITS := $(patsubst t/%.c,$(B)/t/%,$(UNIT_SRCS))

# CUDA: auto builds kernels/ when nvcc is found, 1 requires it, 0 skips it.
# kernels/ becomes the plugin lib/owt/gpt-cuda.so, the one object linked
# with the CUDA runtime and cuBLAS (rpath to the toolkit); the programs
# link no CUDA library and open the plugin when --device asks for CUDA
# (lib/model/gpt_device.c), so that one build runs with or without them.
NVCC ?= $(firstword $(shell command -v nvcc 2>/dev/null) \
	$(wildcard /usr/local/cuda/bin/nvcc))
ifeq ($(CUDA),auto)
CUDA_ON := $(if $(NVCC),1,0)
else
CUDA_ON := $(CUDA)
endif
ifeq ($(CUDA_ON),1)
ifeq ($(NVCC),)
$(error CUDA=1 but nvcc was not found; set NVCC or use CUDA=0)
endif
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
NVCC_ARCH ?= -gencode arch=compute_75,code=sm_75 \
	-gencode arch=compute_80,code=sm_80 \
	-gencode arch=compute_90,code=sm_90
NVCC_FLAGS ?= -O3 -std=c++17 $(NVCC_ARCH) -Xcompiler -Wall,-Wextra \
	-Werror all-warnings
CU_SRCS := $(sort $(wildcard kernels/*.cu))
CU_OBJS := $(patsubst %.cu,$(B)/%.o,$(CU_SRCS))
CUDA_PLUGIN := $(B)/lib/owt/gpt-cuda.so
CUDA_LIBS = -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart \
	-lcublas -lcublasLt -lstdc++
OWT_CPPFLAGS += -DOWT_CUDA=1 -Ikernels
endif

# The MPI plugin lib/owt/comm-mpi.so (lib/comm/comm.c loads it in a world of
# more than one rank, so no program links MPI), built where mpicc is found;
# lib/comm/comm_nccl.c is checked against nccl.h where one is found.
MPICC ?= mpicc
PLUGIN := $(B)/lib/owt/comm-mpi.so

# The SentencePiece plugin lib/owt/spm.so (lib/tok/spm.c loads it when a
# model is first loaded, so that no program links libsentencepiece and
# libstdc++, 4 ms of CPU at each start), built where pkg-config knows
# sentencepiece. -z defs: it uses nothing of the program's; not built
# with SANITIZE's flags, whose runtime is the program's. The GPU machine
# (GPU_ONLY) has no libsentencepiece: it takes the kit's plugin, built by
# contrib/build/gpu-kit.sh with the libraries it needs beside it (its
# DT_RPATH is $ORIGIN), copied whole; without a kit, SentencePiece
# models are refused there, naming the plugin.
SPM_KIT := $(if $(GPU_ONLY:0=),$(wildcard .gpu-kit/lib/spm/spm.so))
SPM_PLUGIN := $(if $(SPM_KIT)$(shell pkg-config --exists sentencepiece \
	2>/dev/null && echo y),$(B)/lib/owt/spm.so)
DEB_PKGS += openmpi-bin libopenmpi-dev
NCCL_H ?= $(firstword $(wildcard /usr/include/nccl.h \
	$(or $(CUDA_HOME),/usr/local/cuda)/include/nccl.h))
$(B)/lib/core/plugin.o: OWT_CPPFLAGS += -DOWT_LIBDIR='"$(LIBDIR)"'
ifneq ($(NCCL_H),)
$(B)/lib/comm/comm_nccl.o: OWT_CPPFLAGS += -DOWT_NCCL_H -I$(dir $(NCCL_H))
endif

.PHONY: all deps check check-gpu gpu-tests demo bench fuzz install uninstall clean
.SUFFIXES:
.SECONDARY:

all: $(BINS) $(CUDA_PLUGIN) $(PLUGIN) $(SPM_PLUGIN)

# Install missing Debian packages (as root), or print the command and stop.
# NODEPS=1 skips the check.
deps:
	@[ "$(NODEPS)" = 1 ] || sh contrib/build/deps.sh $(sort $(DEB_PKGS))

$(B)/lib/%.o: lib/%.c $(wildcard lib/*/*.h) | deps
	@mkdir -p $(@D)
	$(CC) $(OWT_CPPFLAGS) $(OWT_CFLAGS) -c -o $@ $<

# The default vocabulary, linked into bpe.o as an image of its tables
# (lib/tok/bpe.h, bpe_image_write) that contrib/build/mkimage.c, built with a
# bpe.o that has none, makes of data/gpt2 at build time.
BPE_BOOT = $(B)/gen/bpe-boot.o $(addprefix $(B)/lib/,core/buf.o core/input.o \
	core/json.o core/jsonl.o core/opt.o core/outfile.o tok/uniclass.o \
	core/utf8.o core/util.o)
$(B)/gen/bpe-boot.o: lib/tok/bpe.c $(wildcard lib/*/*.h) | deps
	@mkdir -p $(@D)
	$(CC) $(OWT_CPPFLAGS) $(OWT_CFLAGS) -c -o $@ $<
$(B)/gen/mkimage: contrib/build/mkimage.c $(BPE_BOOT)
	$(CC) $(OWT_CPPFLAGS) $(OWT_CFLAGS) -o $@ $^ \
	    $(shell pkg-config --libs yajl libzstd zlib 2>/dev/null) $(KIT_LIBS) -lm
$(B)/gen/gpt2.bpe: $(B)/gen/mkimage data/gpt2/encoder.json data/gpt2/vocab.bpe
	$< data/gpt2/encoder.json data/gpt2/vocab.bpe $@
$(B)/lib/tok/bpe.o: lib/tok/bpe.c $(wildcard lib/*/*.h) $(B)/gen/gpt2.bpe | deps
	$(CC) $(OWT_CPPFLAGS) -DBPE_IMAGE='"$(B)/gen/gpt2.bpe"' $(OWT_CFLAGS) \
	    -c -o $@ $<

# C++ only where a library has no C interface (a shim per library).
$(B)/lib/%.o: lib/%.cc $(wildcard lib/*/*.h) | deps
	@mkdir -p $(@D)
	$(CXX) $(OWT_CPPFLAGS) $(OWT_CXXFLAGS) -c -o $@ $<

$(B)/cmd/%.o: cmd/%.c $(wildcard lib/*/*.h) | deps
	@mkdir -p $(@D)
	$(CC) $(OWT_CPPFLAGS) $(OWT_CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/bin/%: $(B)/cmd/%.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(OWT_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) \
	    $(shell pkg-config --libs $(PKGS_$*) 2>/dev/null) $(KIT_LIBS) \
	    $(LIBS_$*) -lm

$(PLUGIN): lib/comm/comm_mpi.c lib/comm/comm_impl.h | deps
	@mkdir -p $(@D)
	@if command -v $(MPICC) >/dev/null 2>&1; then \
	    echo "$(MPICC) -shared -fPIC -o $@ lib/comm/comm_mpi.c"; \
	    $(MPICC) -std=gnu11 -Wall -Wextra $(CFLAGS) -shared -fPIC -Ilib \
	    -o $@ lib/comm/comm_mpi.c; \
	else \
	    echo "owt: no $(MPICC): $@ not built (one process only)"; \
	fi

ifneq ($(SPM_KIT),)
$(B)/lib/owt/spm.so: $(SPM_KIT)
	@mkdir -p $(@D)
	cp $(dir $(SPM_KIT))* $(@D)/
else
$(B)/lib/owt/spm.so: lib/tok/spm_plugin.cc lib/tok/spm.h | deps
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -Wall -Wextra -Wno-unused-parameter $(CFLAGS) -Ilib \
	    -fPIC -shared -fvisibility=hidden -Wl,-z,defs -o $@ $< \
	    $(shell pkg-config --cflags --libs sentencepiece 2>/dev/null)
endif

# Hidden symbols but the entry point, owtcuda_plugin; -z defs: the plugin
# uses nothing of the program's (what it needs comes in struct
# owtcuda_host).
$(B)/kernels/%.o: kernels/%.cu $(wildcard kernels/*.h) | deps
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -Xcompiler -fPIC,-fvisibility=hidden -Ilib -c \
	    -o $@ $<

$(CUDA_PLUGIN): $(CU_OBJS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -Wl,-z,defs -o $@ $^ $(CUDA_LIBS) -lm

$(B)/t/%: t/%.c $(wildcard t/*.h) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(OWT_CPPFLAGS) $(OWT_CFLAGS) -o $@ $< $(LIB) \
	    $(shell pkg-config --libs $(ALL_PKGS) 2>/dev/null) $(KIT_LIBS) \
	    $(ALL_LIBS) -lm

# The row-wise kernels' micro-benchmark (lib/model/gemv.c), run by hand;
# GEMV_OLD=FILE, another version of gemv.c, adds it (its functions renamed
# old_*) for the two to be timed side by side (make -B: with or without).
GEMV_OLD ?=
GEMV_OLD_OBJ = $(if $(GEMV_OLD),$(B)/bench/gemv-old.o)
$(B)/bench/gemv-old.o: $(GEMV_OLD)
	@mkdir -p $(@D)
	$(CC) $(OWT_CPPFLAGS) $(OWT_CFLAGS) -fopenmp -fno-math-errno \
	    -Dgemv_f32=old_gemv_f32 -Dgemv_f32t=old_gemv_f32t \
	    -Dgemv_q8=old_gemv_q8 -c -o $@ $<
$(B)/bench/gemv-bench: contrib/bench/gemv-bench.c $(LIB) $(GEMV_OLD_OBJ)
	@mkdir -p $(@D)
	$(CC) $(OWT_CPPFLAGS) $(OWT_CFLAGS) -fopenmp $(if $(GEMV_OLD),-DGEMV_OLD) \
	    -o $@ $< $(GEMV_OLD_OBJ) $(LIB) -lm

# The benchmarks' timer: CPU seconds to the microsecond (GNU time's have
# two decimals).
$(B)/bench/cputime: contrib/bench/cputime.c
	@mkdir -p $(@D)
	$(CC) $(OWT_CFLAGS) -o $@ $<

# How much of its core a process gets now (the machine line of each bench).
$(B)/bench/coreprobe: contrib/bench/coreprobe.c
	@mkdir -p $(@D)
	$(CC) $(OWT_CFLAGS) -o $@ $<

TEST_ENV = PATH="$(CURDIR)/$(B)/bin:$$PATH" OWT_BUILD="$(CURDIR)/$(B)" \
	OWT_SRC="$(CURDIR)" OWT_SHARED="$(SHARED)" LC_ALL=C.UTF-8 OWT_DEVICE=cpu \
	ASAN_OPTIONS=abort_on_error=0:detect_leaks=1

# prove's report, then the skipped tests and why (also in $(B)/skips.txt).
check: all $(UNITS) $(B)/bench/cputime
	$(TEST_ENV) sh t/tap-run $(PROVE_FLAGS) t/*.t

# The GPU tests (t/9*.t), built apart in build-gpu/ from the CUDA toolkit
# and libc (GPU_ONLY above); without a device they skip.
check-gpu:
	$(MAKE) GPU_ONLY=1 NODEPS=1 CUDA=1 B=build-gpu gpu-tests

gpu-tests: $(BINS) $(CUDA_PLUGIN) $(SPM_PLUGIN) $(UNITS)
	$(TEST_ENV) sh t/tap-run $(PROVE_FLAGS) t/9*.t

demo: all $(B)/t/httpd
	$(TEST_ENV) sh contrib/demo/run

# the benchmarks' timer and core probe, the HTTP server of the fetch
# benchmarks (contrib/bench/lib.sh) and the training driver of
# gpt-train-dist.sh
bench: all $(B)/bench/cputime $(B)/bench/coreprobe $(B)/t/httpd \
    $(B)/t/train-test
	$(TEST_ENV) sh contrib/bench/run

# libFuzzer targets contrib/fuzz/*.c (clang); FUZZ=NAME, FUZZ_TIME=seconds.
fuzz:
	sh contrib/fuzz/run

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	cp $(BINS) $(DESTDIR)$(BINDIR)/
	if [ -f $(PLUGIN) ]; then mkdir -p $(DESTDIR)$(LIBDIR)/owt && \
	    cp $(PLUGIN) $(DESTDIR)$(LIBDIR)/owt/; fi
	if [ -n "$(CUDA_PLUGIN)" ]; then mkdir -p $(DESTDIR)$(LIBDIR)/owt && \
	    cp $(CUDA_PLUGIN) $(DESTDIR)$(LIBDIR)/owt/; fi
	if [ -n "$(SPM_PLUGIN)" ]; then mkdir -p $(DESTDIR)$(LIBDIR)/owt && \
	    cp $(SPM_PLUGIN) $(DESTDIR)$(LIBDIR)/owt/; fi
	cp contrib/install/megatron-to-owt $(DESTDIR)$(BINDIR)/
	cp man/*.1 $(DESTDIR)$(MANDIR)/man1/
	cp man/*.5 $(DESTDIR)$(MANDIR)/man5/
	cp man/*.7 $(DESTDIR)$(MANDIR)/man7/
	if [ -d data ]; then mkdir -p $(DESTDIR)$(DATADIR) && \
	    cp -R data/. $(DESTDIR)$(DATADIR)/; fi
	mkdir -p $(DESTDIR)$(DATADIR)
	cp contrib/install/owt.mk contrib/install/owt-stage $(DESTDIR)$(DATADIR)/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(PROGS) megatron-to-owt)
	rm -rf $(DESTDIR)$(LIBDIR)/owt
	for f in man/*.[157]; do \
	    s=$${f##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${f#man/}; done
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	rm -rf build build-san build-gpu build-nocuda

# make -j clean check: clean must be done before anything is built again,
# which make does not promise for goals given together.
ifneq ($(and $(filter clean,$(MAKECMDGOALS)),$(filter-out clean,$(MAKECMDGOALS))),)
.NOTPARALLEL:
endif
