#!/usr/bin/python3
"""megatron-order.py - Megatron-LM's GPT sample order, as its own Python computes it

Writes t/data/megatron-order.txt, the vectors t/unit-gpt.c checks lib/train/sampler.c
and lib/train/gpt_data.c against:

    /usr/bin/python3 contrib/oracle/megatron-order.py >t/data/megatron-order.txt

Megatron itself cannot be installed here (it needs torch.distributed, CUDA
and a compiled helpers.cpp), so each function below re-implements one
upstream function, named in its docstring, in plain numpy, following the
upstream code step by step: the same arithmetic in the same order, numpy's
own RandomState and numpy's own np.sum. Written from reading:

  v2.5  megatron/data/dataset_utils.py   get_train_valid_test_split_,
                                         get_datasets_weights_and_num_samples
        megatron/data/gpt_dataset.py     build_train_valid_test_datasets,
                                         _build_index_mappings, _num_epochs,
                                         _build_doc_idx, _build_shuffle_idx
        megatron/data/blendable_dataset.py  BlendableDataset
        megatron/data/helpers.cpp        build_sample_idx, build_blending_indices
  core  megatron/core/datasets/blended_megatron_dataset_config.py
                                         parse_and_normalize_split,
                                         convert_split_vector_to_split_matrix
        megatron/core/datasets/blended_megatron_dataset_builder.py
                                         _build_blended_dataset_splits,
                                         _build_megatron_dataset_splits,
                                         _get_size_per_split_per_dataset
        megatron/core/datasets/blended_dataset.py  BlendedDataset
        megatron/core/datasets/gpt_dataset.py  _get_num_epochs,
                                         _build_document_sample_shuffle_indices
        megatron/core/datasets/utils.py  normalize
        megatron/core/datasets/helpers.cpp  build_sample_idx, build_blending_indices

A dataset here is its sequence lengths; token t of sequence s of dataset d
is d * 10^7 + s * 1000 + t (lengths stay below 1000), which t/unit-gpt.c
writes as an int32 .bin/.idx pair, so a sample's tokens name where it came
from.

Output lines, fields separated by tabs:
  dataset NAME LENGTHS          the sequence lengths, space separated
  split ROUNDING S SPLIT RANGES  train, valid, test ranges "b-e", "none"
                                 (empty), or the single word "error"
  blend ROUNDING N WEIGHTS NEEDS FIRST DIGEST SUM
                                 raw weights, the samples each dataset is
                                 asked for, the first dataset indices, FNV-1a
                                 64 of all N (int32 LE), and "pairwise" when
                                 a left-to-right sum in the last
                                 normalisation would change them ("-")
  order NAME ROUNDING SEED L SPLIT NEEDS DATA-PATH
                                 one gpt-train data set-up, followed by
    sample SPLIT FIRST           its first samples, "d:s.o-s.o" (first and
                                 last token: dataset, sequence, offset)
    digest SPLIT N HEX           FNV-1a 64 of all N samples' tokens (int32 LE)
    error WHY                    or: Megatron cannot build it
  end
"""

import math
import sys

import numpy as np

TOKEN_DS = 10 ** 7
TOKEN_SEQ = 1000


def python_sum(xs):
    """Python's sum() of floats as Megatron v2.5 ran it (Python < 3.12):
    left to right from 0 (3.12 made sum() compensated)."""
    s = 0
    for x in xs:
        s = s + x
    return s


# ---- the split ----

def legacy_split(splits_string, size):
    """v2.5 dataset_utils.get_train_valid_test_split_."""
    if splits_string.find(',') != -1:
        splits = [float(s) for s in splits_string.split(',')]
    elif splits_string.find('/') != -1:
        splits = [float(s) for s in splits_string.split('/')]
    else:
        splits = [float(splits_string)]
    while len(splits) < 3:
        splits.append(0.)
    splits = splits[:3]
    splits_sum = python_sum(splits)
    assert splits_sum > 0.0
    splits = [split / splits_sum for split in splits]
    splits_index = [0]
    for index, split in enumerate(splits):
        splits_index.append(splits_index[index] +
                            int(round(split * float(size))))
    diff = splits_index[-1] - size
    for index in range(1, len(splits_index)):
        splits_index[index] -= diff
    assert len(splits_index) == 4
    assert splits_index[-1] == size
    return splits_index


def legacy_ranges(splits_string, size):
    """The ranges v2.5's _build_train_valid_test_datasets builds: split i is
    built when splits[i + 1] > splits[i], from np.arange of it, which
    GPTDataset refuses below 0 (assert np.min(documents) >= 0)."""
    b = legacy_split(splits_string, size)
    out = []
    for i in range(3):
        if b[i + 1] > b[i]:
            if b[i] < 0:
                raise ValueError("negative document index")
            out.append((b[i], b[i + 1]))
        else:
            out.append(None)
    return out


def normalize(weights):
    """core utils.normalize (and v2.5 BlendableDataset's weights /= np.sum)."""
    w = np.array(weights, dtype=np.float64)
    w_sum = np.sum(w)
    w = (w / w_sum).tolist()
    return w


def core_split_matrix(split):
    """core parse_and_normalize_split, then
    convert_split_vector_to_split_matrix with one vector."""
    import re
    split = list(map(float, re.findall(r"[.0-9]+", split)))
    split = split + [0.0 for _ in range(3 - len(split))]
    assert len(split) == 3
    assert all(map(lambda _: _ >= 0.0, split))
    split = normalize(split)
    expansion = [0]
    for b in split:
        expansion.append(expansion[len(expansion) - 1] + b)
    bookends = list(zip(expansion[:-1], expansion[1:]))
    matrix = []
    for a in bookends:
        if a[1] <= a[0]:
            matrix.append(None)
        else:
            matrix.append((a[0], a[1]))
    return matrix


def core_ranges(split, num_elements):
    """core _build_megatron_dataset_splits: beg and end of each split."""
    out = []
    for m in core_split_matrix(split):
        if m is None:
            out.append(None)
            continue
        beg = int(round(m[0] * float(num_elements)))
        end = int(round(m[1] * float(num_elements)))
        out.append((beg, end))
    return out


def ranges(rounding, split, size):
    return legacy_ranges(split, size) if rounding == "legacy" else \
        core_ranges(split, size)


def ranges_text(r):
    return " ".join("%d-%d" % x if x is not None and x[1] > x[0] else "none"
                    for x in r)


# ---- one dataset split: doc, sample and shuffle indices ----

def num_epochs(tokens_per_epoch, seq_length, num_samples):
    """v2.5 gpt_dataset._num_epochs (core _get_num_epochs with
    add_extra_token_to_sequence 1; num_samples None is one epoch)."""
    if num_samples is None:
        return 1
    n = 0
    total_tokens = 0
    while True:
        n += 1
        total_tokens += tokens_per_epoch
        if ((total_tokens - 1) // seq_length) >= num_samples:
            return n


def build_doc_idx(documents, n_epochs, np_rng, separate_last_epoch):
    """v2.5 gpt_dataset._build_doc_idx (core _build_document_index)."""
    if not separate_last_epoch or n_epochs == 1:
        doc_idx = np.mgrid[0:n_epochs, 0:len(documents)][1]
        doc_idx[:] = documents
        doc_idx = doc_idx.reshape(-1)
        doc_idx = doc_idx.astype(np.int32)
        np_rng.shuffle(doc_idx)
        return doc_idx
    doc_idx_first = build_doc_idx(documents, n_epochs - 1, np_rng, False)
    doc_idx_last = build_doc_idx(documents, 1, np_rng, False)
    return np.concatenate((doc_idx_first, doc_idx_last))


def build_sample_idx(sizes, doc_idx, seq_length, n_epochs, tokens_per_epoch):
    """helpers.cpp build_sample_idx (core's, with its defaults
    drop_last_partial_sequence and add_extra_token_to_sequence 1; v2.5's
    lacks only the end-of-array guard, which these vectors never reach)."""
    num_samples = (n_epochs * tokens_per_epoch - 1) // seq_length
    sample_idx = np.zeros((num_samples + 1, 2), dtype=np.int64)
    sample_index = 0
    doc_idx_index = 0
    doc_offset = 0
    sample_idx[sample_index] = (doc_idx_index, doc_offset)
    sample_index += 1
    while sample_index <= num_samples:
        remaining_seq_length = seq_length + 1
        while remaining_seq_length != 0:
            doc_id = doc_idx[doc_idx_index]
            doc_length = int(sizes[doc_id]) - doc_offset
            remaining_seq_length -= doc_length
            if remaining_seq_length <= 0:
                doc_offset += (remaining_seq_length + doc_length - 1)
                remaining_seq_length = 0
            else:
                if doc_idx_index == len(doc_idx) - 1:
                    raise RuntimeError("sample index overrun")
                doc_idx_index += 1
                doc_offset = 0
        sample_idx[sample_index] = (doc_idx_index, doc_offset)
        sample_index += 1
    return sample_idx


def build_shuffle_idx(num_samples, total_size, np_rng):
    """v2.5 gpt_dataset._build_shuffle_idx (core _build_shuffle_index)."""
    dtype_ = np.uint32
    if total_size >= (np.iinfo(np.uint32).max - 1):
        dtype_ = np.int64
    shuffle_idx_first = np.arange(start=0, stop=num_samples, step=1,
                                  dtype=dtype_)
    np_rng.shuffle(shuffle_idx_first)
    if num_samples == total_size:
        return shuffle_idx_first
    shuffle_idx_last = np.arange(start=num_samples, stop=total_size, step=1,
                                 dtype=dtype_)
    np_rng.shuffle(shuffle_idx_last)
    return np.concatenate((shuffle_idx_first, shuffle_idx_last))


class GPTDataset:
    """v2.5 gpt_dataset.GPTDataset and _build_index_mappings (core
    GPTDataset._build_document_sample_shuffle_indices): num_samples None is
    core's one epoch, no separate last epoch."""

    def __init__(self, d, sizes, documents, num_samples, seq_length, seed):
        self.d = d
        self.sizes = sizes
        tokens_per_epoch = int(np.sum(sizes[documents]))
        n_epochs = num_epochs(tokens_per_epoch, seq_length, num_samples)
        np_rng = np.random.RandomState(seed=seed)
        if n_epochs == 1:
            separate_last_epoch = False
        else:
            num_samples_from_epochs_minus_one = (
                (n_epochs - 1) * tokens_per_epoch - 1) // seq_length
            last_epoch_num_samples = num_samples - \
                num_samples_from_epochs_minus_one
            assert last_epoch_num_samples >= 0
            num_samples_per_epoch = (tokens_per_epoch - 1) // seq_length
            assert last_epoch_num_samples < (num_samples_per_epoch + 1)
            separate_last_epoch = (last_epoch_num_samples <
                                   int(0.80 * num_samples_per_epoch))
        self.epochs = n_epochs
        self.separate = separate_last_epoch
        self.doc_idx = build_doc_idx(documents, n_epochs, np_rng,
                                     separate_last_epoch)
        self.sample_idx = build_sample_idx(sizes, self.doc_idx, seq_length,
                                           n_epochs, tokens_per_epoch)
        if separate_last_epoch:
            num_samples_ = num_samples_from_epochs_minus_one
        else:
            num_samples_ = self.sample_idx.shape[0] - 1
        self.shuffle_idx = build_shuffle_idx(num_samples_,
                                             self.sample_idx.shape[0] - 1,
                                             np_rng)

    def __len__(self):
        return self.sample_idx.shape[0] - 1

    def tokens(self, idx):
        """GPTDataset.__getitem__, with token ids from where they lie."""
        if idx >= len(self):
            raise IndexError(idx)
        idx = self.shuffle_idx[idx]
        doc_index_f = self.sample_idx[idx][0]
        doc_index_l = self.sample_idx[idx + 1][0]
        offset_f = self.sample_idx[idx][1]
        offset_l = self.sample_idx[idx + 1][1]
        if doc_index_f == doc_index_l:
            return self.get(self.doc_idx[doc_index_f], offset_f,
                            offset_l - offset_f + 1)
        out = self.get(self.doc_idx[doc_index_f], offset_f)
        for i in range(doc_index_f + 1, doc_index_l):
            out += self.get(self.doc_idx[i], 0)
        out += self.get(self.doc_idx[doc_index_l], 0, offset_l + 1)
        return out

    def get(self, seq, offset, length=None):
        if length is None:
            length = int(self.sizes[seq]) - offset
        return [self.d * TOKEN_DS + int(seq) * TOKEN_SEQ + int(offset) + t
                for t in range(length)]


# ---- blending ----

def legacy_weights_and_num_samples(weights, train_valid_test_num_samples):
    """v2.5 dataset_utils.get_datasets_weights_and_num_samples."""
    weights = [float(w) for w in weights]
    weight_sum = 0.0
    for weight in weights:
        weight_sum += weight
    assert weight_sum > 0.0
    weights = [weight / weight_sum for weight in weights]
    datasets_train_valid_test_num_samples = []
    for weight in weights:
        datasets_train_valid_test_num_samples.append(
            [int(math.ceil(val * weight * 1.005))
             for val in train_valid_test_num_samples])
    return weights, datasets_train_valid_test_num_samples


def core_size_per_split_per_dataset(normalized_weights, target_size_per_split,
                                    surplus=0.0):
    """core blended_megatron_dataset_builder._get_size_per_split_per_dataset."""
    assert np.isclose(sum(normalized_weights), 1.0)
    return [[int(math.ceil(math.ceil(target_size * weight) * (1 + surplus)))
             for target_size in target_size_per_split]
            for weight in normalized_weights]


def build_blending_indices(weights, size):
    """helpers.cpp build_blending_indices (the same in v2.5 and core)."""
    num_datasets = len(weights)
    dataset_index = np.zeros(size, dtype=np.int16)
    dataset_sample_index = np.zeros(size, dtype=np.int64)
    current_samples = [0] * num_datasets
    for sample_idx in range(size):
        sample_idx_double = max(float(sample_idx), 1.0)
        max_error_index = 0
        max_error = weights[0] * sample_idx_double - float(current_samples[0])
        for dataset_idx in range(1, num_datasets):
            error = weights[dataset_idx] * sample_idx_double - \
                float(current_samples[dataset_idx])
            if error > max_error:
                max_error = error
                max_error_index = dataset_idx
        dataset_index[sample_idx] = max_error_index
        dataset_sample_index[sample_idx] = current_samples[max_error_index]
        current_samples[max_error_index] += 1
    return dataset_index, dataset_sample_index


class Blend:
    """v2.5 BlendableDataset(datasets, weights) and core
    BlendedDataset(datasets, weights, size): weights normalised with np.sum,
    then the greedy interleave."""

    def __init__(self, datasets, weights, size):
        self.datasets = datasets
        self.weights = normalize(weights)
        self.size = size
        self.didx, self.sidx = build_blending_indices(self.weights, size)

    def tokens(self, i):
        return self.datasets[self.didx[i]].tokens(int(self.sidx[i]))

    def parts(self):
        return self.datasets


class Single:
    def __init__(self, ds):
        self.ds = ds

    def tokens(self, i):
        return self.ds.tokens(i)

    def parts(self):
        return [self.ds]


def megatron_order(rounding, data, paths, split, need, L, seed):
    """The train, valid and test sources for one --data-path, as v2.5's
    build_train_valid_test_datasets (legacy) or core's
    BlendedMegatronDatasetBuilder._build_blended_dataset_splits (core)
    build them. paths are --data-path's words. Prefixes without weights,
    which v2.5 refuses (float() of a prefix), take core's rule in both.
    Returns three sources (None: no split) or raises ValueError."""
    weighted = len(paths) % 2 == 0 and all(is_float(w) for w in paths[::2])
    names = paths[1::2] if weighted else paths
    raw = [float(w) for w in paths[::2]] if weighted else None
    sizes = [np.array(data[n], dtype=np.int32) for n in names]
    rng = [ranges(rounding, split, len(s)) for s in sizes]

    def build(d, s, num_samples):
        r = rng[d][s]
        if r is None or r[1] <= r[0]:
            raise ValueError("empty split of a blended dataset")
        documents = np.arange(start=r[0], stop=r[1], step=1, dtype=np.int32)
        return GPTDataset(d, sizes[d], documents, num_samples, L, seed)

    out = [None, None, None]
    if not weighted and len(names) == 1:
        for s in range(3):
            r = rng[0][s]
            if r is not None and r[1] > r[0] and need[s] > 0:
                out[s] = Single(build(0, s, need[s]))
        return out
    if not weighted:
        # core: one epoch of each, weighted by its samples, at most need
        for s in range(3):
            if rng[0][s] is None or need[s] == 0:
                continue
            dss = [build(d, s, None) for d in range(len(names))]
            w = [len(ds) for ds in dss]
            if need[s] > sum(w):
                raise ValueError("one epoch holds %d samples, %d needed"
                                 % (sum(w), need[s]))
            out[s] = Blend(dss, w, min(need[s], sum(w)))
        return out
    if rounding == "legacy":
        weights, nums = legacy_weights_and_num_samples(raw, need)
        for s in range(3):
            dss = []
            for d in range(len(names)):
                r = rng[d][s]
                if r is not None and r[1] > r[0]:
                    dss.append(build(d, s, nums[d][s]))
            if not dss or need[s] == 0:
                continue
            if len(dss) != len(weights):
                raise ValueError("BlendableDataset: weights for every dataset")
            size = sum(len(ds) for ds in dss)
            out[s] = Blend(dss, weights, size)
        return out
    weights = normalize(raw)
    target = core_size_per_split_per_dataset(weights, need)
    buffer = core_size_per_split_per_dataset(weights, need, surplus=0.005)
    for s in range(3):
        if rng[0][s] is None or need[s] == 0:
            continue
        dss = [build(d, s, buffer[d][s]) for d in range(len(names))]
        out[s] = Blend(dss, weights, sum(t[s] for t in target))
    return out


def is_float(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def fnv(h, toks):
    for t in toks:
        for b in int(t).to_bytes(4, "little"):
            h ^= b
            h = (h * 0x100000001b3) & 0xffffffffffffffff
    return h


def describe(toks):
    def one(t):
        return "%d:%d.%d" % (t // TOKEN_DS, t % TOKEN_DS // TOKEN_SEQ,
                             t % TOKEN_SEQ)
    a, b = one(toks[0]), one(toks[-1])
    return "%s-%s" % (a, b[b.index(":") + 1:])


# ---- the vectors ----

def datasets():
    rs = np.random.RandomState(20240601)
    data = {}
    data["A"] = rs.randint(1, 60, 1029)     # the 1029 documents
    data["B"] = rs.randint(1, 200, 45)      # long sequences
    data["C"] = rs.randint(0, 9, 10)        # zero-length ones among them
    data["D"] = rs.randint(1, 20, 300)
    for i in range(9):
        data["E%d" % i] = rs.randint(1, 30, 20 + 3 * i)
    return data


def emit(*fields):
    print("\t".join(str(f) for f in fields))


def main():
    data = datasets()
    print("# Megatron-LM's sample order, from contrib/oracle/megatron-order.py "
          "(numpy %s); do not edit" % np.__version__)
    for name in data:
        emit("dataset", name, " ".join(str(x) for x in data[name]))

    # the split, both ways: the notes' table, the issue's 1029 documents
    splits = [(10, "900,50,50"), (45, "900,50,50"), (1029, "900,50,50"),
              (8013769, "900,50,50"), (12345, "949,50,1"),
              (8013769, "969, 30, 1"), (100, "98,2"), (1029, "1"),
              (1000, "0.1,0.2,0.7"), (7, "1/1/1"), (1029, "969,30,1,5"),
              (3, "0,50,50"), (300, "90,5,5"), (45, "33,33,33")]
    for n, sp in splits:
        for rounding in ("legacy", "core"):
            if rounding == "core" and "/" in sp:
                continue
            try:
                r = ranges_text(ranges(rounding, sp, n))
            except (AssertionError, ValueError):
                r = "error"
            emit("split", rounding, n, sp, r)

    # blending: the samples each dataset is asked for, and the interleave
    blends = [(1000, ["0.7", "0.3"]), (1000, ["0.3333", "0.6667"]),
              (12345, ["0.5", "0.3", "0.2"]), (977, ["1", "2", "3", "4"]),
              (5000, ["0.1", "0.2", "0.3", "0.1", "0.05", "0.05", "0.1",
                      "0.05", "0.05"]),
              (2000, ["2", "1", "0.3", "0.25", "2", "0.02", "3", "2", "0.2"]),
              (100, ["1"])]
    for n, w in blends:
        for rounding in ("legacy", "core"):
            if rounding == "legacy":
                weights, nums = legacy_weights_and_num_samples(w, [n])
                needs = [x[0] for x in nums]
            else:
                weights = normalize([float(x) for x in w])
                needs = [x[0] for x in core_size_per_split_per_dataset(
                    weights, [n], surplus=0.005)]
            didx, _ = build_blending_indices(normalize(weights), n)
            # whether Python's sum in place of numpy's would change it
            plain, _ = build_blending_indices(
                [x / python_sum(weights) for x in weights], n)
            emit("blend", rounding, n, " ".join(w),
                 " ".join(str(x) for x in needs),
                 "".join("%x" % d for d in didx[:60]),
                 "%016x" % fnv(0xcbf29ce484222325, didx),
                 "pairwise" if (plain != didx).any() else "-")

    orders = [
        # the 1029 documents at 900,50,50: sequence 926 is train in v2.5
        ("split1029", "900,50,50", [300, 40, 20], 8, 1234, ["A"]),
        ("epochs", "969, 30, 1", [4000, 200, 30], 16, 1, ["A"]),
        ("mixed", "90,5,5", [3300, 150, 12], 16, 4294967295, ["A"]),
        ("long", "80,10,10", [60, 12, 8], 24, 7, ["B"]),
        ("zeros", "1", [20, 0, 0], 3, 99, ["C"]),
        ("zeros-epochs", "1", [70, 0, 0], 2, 0, ["C"]),
        ("weighted", "900,50,50", [700, 60, 30], 8, 1234,
         ["0.7", "A", "0.3", "D"]),
        ("weighted3", "90,5,5", [1500, 50, 10], 12, 42,
         ["0.5", "A", "0.3", "D", "0.2", "B"]),
        ("onewt", "900,50,50", [500, 30, 10], 8, 1234, ["1", "A"]),
        ("unweighted", "900,50,50", [900, 100, 50], 8, 1234, ["A", "D"]),
        ("unweighted-short", "900,50,50", [5000, 100, 50], 8, 1234,
         ["A", "D"]),
        # the blend's second normalisation takes numpy's pairwise sum
        # (9 weights): a sequential sum picks another dataset at sample 718
        ("nine", "80,20,0", [900, 40, 0], 6, 5, sum(
            [[x, "E%d" % i] for i, x in enumerate(
                ["2", "1", "0.3", "0.25", "2", "0.02", "3", "2", "0.2"])],
            [])),
        # v2.5 asks B for ceil(908 w 1.005) = 609 samples, core for
        # ceil(ceil(908 w) 1.005) = 610: one epoch against two
        ("margin", "1", [908, 0, 0], 8, 1234, ["0.3333", "D", "0.6667", "B"]),
    ]
    for name, sp, need, L, seed, paths in orders:
        for rounding in ("legacy", "core"):
            emit("order", name, rounding, seed, L, sp,
                 " ".join(str(x) for x in need), " ".join(paths))
            try:
                src = megatron_order(rounding, data, paths, sp, need, L, seed)
            except (AssertionError, ValueError) as e:
                emit("error", e)
                emit("end")
                continue
            for s in range(3):
                if src[s] is None:
                    continue
                for ds in src[s].parts():
                    print("# split %d dataset %d: %d epoch(s)%s, %d samples"
                          % (s, ds.d, ds.epochs, ", the last separate"
                             if ds.separate else "", len(ds)))
                toks = [src[s].tokens(i) for i in range(need[s])]
                emit("sample", s, " ".join(describe(t) for t in toks[:12]))
                h = 0xcbf29ce484222325
                for t in toks:
                    assert len(t) == L + 1
                    h = fnv(h, t)
                emit("digest", s, need[s], "%016x" % h)
            emit("end")


if __name__ == "__main__":
    sys.exit(main())
