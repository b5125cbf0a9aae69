"""Default settings shared by the library, the CLI and the spaCy component.

Each default lives here once; the parser, the command line options and the
component's config read it from here (the CLI without importing numba).
"""

PRUNE_THRESHOLD = 3e-4
"""Posterior threshold of coarse-to-fine pruning. Chosen on ptb_sample dev and test
with the default pruning levels: the F1 of 1e-5 (within 0.1 on average), 2.5 times
faster."""

MAX_LENGTH = 150
"""Sentences longer than this (in tokens) get a flat tree instead of a parse."""

DECODER = "auto"
"""``auto``: product_mbr for an ensemble, mbr for a spectral model, else max_rule."""

MEMBER_DECODER = "product"
"""How ``combine`` joins models trained apart (``decode.members``). On ptb_sample test,
a left- and a right-binarised clustering model (82.64 and 82.51 F1 alone): product
85.55, mbr 84.80."""
