#!/usr/bin/env python3
"""Writes the numpy golden tables that half's tests check against.

Run from the repository root with numpy installed (Debian: python3-numpy):

    python3 half/testdata/gen_numpy.py

numpy is an independent implementation of IEEE binary16 (npy_floatbits_to_halfbits
and npy_doublebits_to_halfbits: round to nearest even, directly from float32 or
float64). It has no bfloat16, so BFloat16 is checked against the Go tests'
own big.Float reference only. The committed tables came from numpy 1.24.2. NaN inputs are left out: numpy keeps a NaN's sign
and payload where CUDA, and package half, give the canonical 0x7fff.

Files, gzipped (one case a line, hexadecimal bit patterns):
  f32_to_f16.txt     float32 bits, float16 bits of astype(float16)
  f64_to_f16.txt     float64 bits, float16 bits of astype(float16)
  f16_shortest.txt   float16 bits, numpy's shortest round-trip digits as
                     np.format_float_scientific(unique=True) writes them,
                     for every non-negative finite float16
"""
import gzip
import os

import numpy as np

OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(27)


def f16_midpoints():
    """The exact midpoints between adjacent non-negative float16 values, as
    float64, including the one between the largest finite value and 2^16."""
    vals = np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    vals = np.append(vals, 65536.0)
    return (vals[:-1] + vals[1:]) / 2


def write(name, lines):
    # gzip without a name or time in its header, so a rerun writes the same bytes
    with open(os.path.join(OUT, name + ".gz"), "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
        f.write("".join(lines).encode())


def f32_table():
    mids = f16_midpoints().astype(np.float32)  # exact: midpoints need 12 bits
    assert (mids.astype(np.float64) == f16_midpoints()).all()
    mb = mids.view(np.uint32)
    picks = rng.choice(mb, 1500, replace=False)
    near = np.concatenate([picks - 1, picks, picks + 1])
    edges = np.array(
        [
            0x00000000, 0x00000001, 0x007FFFFF, 0x00800000,  # float32 zero, subnormals
            0x33000000, 0x33000001, 0x32FFFFFF,  # 2^-25: halfway to the smallest subnormal
            0x33800000, 0x33C00000, 0x33C00001, 0x33BFFFFF,  # 2^-24 and 1.5 * 2^-24
            0x387FC000, 0x387FE000, 0x387FFFFF, 0x38800000,  # around the smallest normal
            0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001,  # 65504, the overflow threshold 65520
            0x47800000, 0x7F7FFFFF, 0x7F800000,  # 65536, float32 max, +Inf
            0x3F800000, 0x3F801000, 0x3F803000, 0x3F801001, 0x3F800FFF,  # 1 and ties to even above it
            0x3DCCCCCD,  # 0.1
        ],
        dtype=np.uint32,
    )
    rand = rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32)
    allb = np.concatenate([edges, near, rand])
    allb = np.concatenate([allb, allb | np.uint32(0x80000000)])
    allb = allb[~np.isnan(allb.view(np.float32))]
    allb = np.unique(allb)
    out = allb.view(np.float32).astype(np.float16).view(np.uint16)
    write("f32_to_f16.txt", ["%08x %04x\n" % (int(a), int(b)) for a, b in zip(allb, out)])


def f64_table():
    mids = f16_midpoints()
    mb = mids.view(np.uint64)
    picks = rng.choice(mb, 800, replace=False)
    # One float64 ulp either side of a midpoint: rounding through float32
    # first would land on the midpoint and tie; a direct conversion must not.
    near = np.concatenate([picks - 1, picks, picks + 1, picks - (1 << 28), picks + (1 << 28)])
    edges = np.array([0x0000000000000001, 0x3E70000000000000, 0x3E70000000000001, 0x40EFFE0000000000,
                      0x40EFFDFFFFFFFFFF, 0x40EFFE0000000001, 0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000],
                     dtype=np.uint64)
    rand = rng.integers(0, 1 << 63, 1000, dtype=np.uint64)
    # random values where float16 is interesting: exponents from 2^-30 to 2^20
    exps = rng.integers(1023 - 30, 1023 + 20, 3000, dtype=np.uint64)
    mant = rng.integers(0, 1 << 52, 3000, dtype=np.uint64)
    inrange = (exps << np.uint64(52)) | mant
    allb = np.concatenate([edges, near, rand, inrange])
    allb = np.concatenate([allb, allb | np.uint64(1 << 63)])
    allb = allb[~np.isnan(allb.view(np.float64))]
    allb = np.unique(allb)
    out = allb.view(np.float64).astype(np.float16).view(np.uint16)
    write("f64_to_f16.txt", ["%016x %04x\n" % (int(a), int(b)) for a, b in zip(allb, out)])


def shortest_table():
    bits = np.arange(0, 0x7C00, dtype=np.uint16)
    vals = bits.view(np.float16)
    write("f16_shortest.txt",
          ["%04x %s\n" % (int(b), np.format_float_scientific(v, unique=True, trim="-"))
           for b, v in zip(bits, vals)])


if __name__ == "__main__":
    with np.errstate(over="ignore"):
        f32_table()
        f64_table()
    shortest_table()
