"""Packaged with the pipeline (``spacy package --code``) and imported with it: seeds
numba's cache with the compiled kernels the pipeline ships (``kernels/``, made by
``scripts/kernels.py``), so that its first parse does not compile them. Entries for
another spacy-lpcfg version, numba or CPU are left unused; nothing is overwritten."""

from pathlib import Path

from spacy_lpcfg import kernel_cache

for folder in Path(__file__).resolve().parent.glob("*/kernels"):
    kernel_cache.seed(folder)
