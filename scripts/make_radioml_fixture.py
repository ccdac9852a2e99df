#!/usr/bin/python3
"""Write the small RadioML 2018.01A-layout HDF5 files that signal/radioml's
tests read (signal/radioml/testdata/).

The layout is that of DeepSig's GOLD_XYZ_OSC.0001_1024.hdf5: datasets
X (float32, N x 1024 x 2: I and Q), Y (int64 one-hot, N x 24) and
Z (int64, N x 1: SNR in dB), records class-major, SNR ascending within a
class. The values are exact in float32 and computed from the record and
sample index alone, so the Go test recomputes them (radioml_test.go,
fixtureI/fixtureQ):

    I[n, i] = ((n*1031 + i*7) mod 4096 - 2048) / 1024
    Q[n, i] = ((n*517 + i*13) mod 4096 - 2048) / 2048
    class(n) = n // S, SNR(n) = SNRS[n mod S]   (S SNRs per class)

Files:
  small.hdf5          48 records (24 classes x SNR -20, 30), h5py's
                      defaults: superblock 0, contiguous datasets
  chunked_gzip.hdf5   24 records (24 classes x SNR 0), chunked 5 x 1024 x 2
                      (a partial last chunk) with shuffle + gzip
  latest.hdf5         2 records, libver="latest": superblock 3, version 2
                      object headers, contiguous
  fletcher32.hdf5     1 record, chunked with the Fletcher-32 checksum
                      filter, which the reader refuses by name
  latest_chunked.hdf5 3 records of 16 samples, libver="latest", X in three
                      chunks: a version 4 layout with a fixed-array chunk
                      index, refused
  latest_single.hdf5  2 records, libver="latest", each dataset one chunk
                      (the version 4 single-chunk index), shuffle + gzip
  userblock.hdf5      2 records of 16 samples after a 512-byte user block
  bad_shape.hdf5      X of 2 x 16 x 3, refused
  bad_z.hdf5          Z of 2 x 2, refused
  no_z.hdf5           X and Y only, refused
  not_onehot.hdf5     2 records, the second labelled with two classes

Run with Debian's python3-h5py (apt-get install python3-h5py):
    /usr/bin/python3 scripts/make_radioml_fixture.py signal/radioml/testdata
The output is deterministic for one h5py/HDF5 version (3.7.0 / 1.10.8 on
Debian bookworm wrote the committed files).
"""
import os
import sys

import h5py
import numpy as np

CLASSES = 24


def arrays(snrs):
    n = CLASSES * len(snrs)
    rec = np.arange(n, dtype=np.int64)[:, None]
    i = np.arange(1024, dtype=np.int64)[None, :]
    x = np.empty((n, 1024, 2), dtype=np.float32)
    x[:, :, 0] = (((rec * 1031 + i * 7) % 4096) - 2048) / 1024.0
    x[:, :, 1] = (((rec * 517 + i * 13) % 4096) - 2048) / 2048.0
    y = np.zeros((n, CLASSES), dtype=np.int64)
    y[np.arange(n), np.arange(n) // len(snrs)] = 1
    z = np.array([[snrs[k % len(snrs)]] for k in range(n)], dtype=np.int64)
    return x, y, z


def write(path, snrs, records=None, libver="earliest", **kw):
    x, y, z = arrays(snrs)
    if records is not None:
        x, y, z = x[:records], y[:records], z[:records]
    with h5py.File(path, "w", libver=libver, track_order=False) as f:
        f.create_dataset("X", data=x, **kw)
        f.create_dataset("Y", data=y, **kw)
        f.create_dataset("Z", data=z, **kw)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "signal/radioml/testdata"
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "small.hdf5"), [-20, 30])
    x, y, z = arrays([0])
    with h5py.File(os.path.join(out, "chunked_gzip.hdf5"), "w") as f:
        f.create_dataset("X", data=x, chunks=(5, 1024, 2), shuffle=True, compression="gzip", compression_opts=6)
        f.create_dataset("Y", data=y, chunks=(7, 24), shuffle=True, compression="gzip")
        f.create_dataset("Z", data=z, chunks=(24, 1), compression="gzip")
    write(os.path.join(out, "latest.hdf5"), [10], records=2, libver="latest")
    write(os.path.join(out, "fletcher32.hdf5"), [10], records=1, chunks=True, fletcher32=True)
    x, y, z = arrays([10])
    with h5py.File(os.path.join(out, "latest_chunked.hdf5"), "w", libver="latest") as f:
        f.create_dataset("X", data=x[:3, :16], chunks=(1, 16, 2))
        f.create_dataset("Y", data=y[:3])
        f.create_dataset("Z", data=z[:3])
    with h5py.File(os.path.join(out, "latest_single.hdf5"), "w", libver="latest") as f:
        for name, a in (("X", x[:2]), ("Y", y[:2]), ("Z", z[:2])):
            f.create_dataset(name, data=a, chunks=a.shape, shuffle=True, compression="gzip")
    x, y, z = arrays([10])
    with h5py.File(os.path.join(out, "bad_shape.hdf5"), "w") as f:
        f.create_dataset("X", data=np.zeros((2, 16, 3), dtype=np.float32))
        f.create_dataset("Y", data=y[:2])
        f.create_dataset("Z", data=z[:2])
    with h5py.File(os.path.join(out, "userblock.hdf5"), "w", userblock_size=512) as f:
        f.create_dataset("X", data=x[:2, :16])
        f.create_dataset("Y", data=y[:2])
        f.create_dataset("Z", data=z[:2])
    with h5py.File(os.path.join(out, "bad_z.hdf5"), "w") as f:
        f.create_dataset("X", data=x[:2, :16])
        f.create_dataset("Y", data=y[:2])
        f.create_dataset("Z", data=np.zeros((2, 2), dtype=np.int64))
    with h5py.File(os.path.join(out, "no_z.hdf5"), "w") as f:
        f.create_dataset("X", data=x[:2, :16])
        f.create_dataset("Y", data=y[:2])
    y2 = y[:2].copy()
    y2[1, 5] = 1
    with h5py.File(os.path.join(out, "not_onehot.hdf5"), "w") as f:
        f.create_dataset("X", data=x[:2, :16])
        f.create_dataset("Y", data=y2)
        f.create_dataset("Z", data=z[:2])


if __name__ == "__main__":
    main()
