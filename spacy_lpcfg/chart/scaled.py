"""Scaling for the numba kernels: how they keep numbers in float64's range.

The chart kernels use a float64 mantissa and an int64 exponent (below); the EM
kernels over gold trees divide each node's vector by its largest entry and keep the
log of the factor per node (``divide_by_largest``).

Inside and outside scores of long sentences under- and overflow float64, and
spectral grammars have negative weights, so log space is not an option: a
value is ``mantissa * 2**exponent`` (the Berkeley parser's ScalingTools, with
powers of two). A zero has exponent ``EMPTY``. Every kernel family (coarse,
one-state, latent, Viterbi) uses these helpers, so the arithmetic is written
once.

Numba's on-disk cache does not notice changes to jitted functions imported
from other files: after editing a helper here, delete the ``__pycache__``
folders of the chart package.

Compile time. A fresh process with an empty numba cache compiles every kernel it
calls before its first parse, so the kernels are written to compile once each:

* a jitted helper compiles once per distinct tuple of argument types, and numba
  types a constant argument (``f(x, 0)``, ``f(x, False)``, ``f(x, EMPTY)``) as a
  literal, a type of its own; so does a counter set to 0 before a loop, for as long
  as type inference has not seen it change (the helper is then compiled for the
  literal *and* for int64). Such arguments are passed as typed values
  (``np.int64(0)``, ``np.bool_(True)``), and array arguments keep one dtype, layout
  and dimension at every call. A literal stays where its specialisation is wanted:
  the flags that choose a branch in an inner loop of the coarse pass
  (``_unary_closure``'s direction, ``_split_range``'s side), which numba then folds
  away;
* a slice assigned from an array (``a[i:j] = b[k:l]``) makes numba compile the
  formatting of its shape-mismatch error (seconds of string code): rows are
  copied with loops instead (``grow``);
* numba compiles the functions it has for NumPy (``np.empty``, ``np.zeros``, ...)
  once per argument types *and* per set of jit options of the kernel calling them,
  and a helper with no ``fastmath`` of its own takes the options of the kernel that
  happens to compile it first. Helpers therefore state ``fastmath``: the latent
  kernels' ``FAST_MATH`` for ``normalise``, ``accumulate`` and ``add_scaled``
  (their only callers, whose options they always had), none for the others; all share ``KERNEL`` or
  ``HELPER`` below, and a NumPy allocation is written one way per dtype (float64
  arrays without a dtype argument).

``tests/chart/test_compile_signatures.py`` checks these rules on what a process
compiles to parse with one-state and latent grammars.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from .. import kernel_cache

kernel_cache.install()  # numba caches the kernels by their place in the package

EMPTY = -(1 << 40)  # exponent of a zero; sums of a few stay far from int64 overflow
MIN_SHIFT = -1100  # 2.0**MIN_SHIFT underflows to zero in float64
# Reassociation lets numba vectorise dot products; inf/nan semantics are kept.
FAST_MATH = {"reassoc", "contract"}
# The jit options of the chart kernels: KERNEL for those called from Python, HELPER
# (no Python wrapper to build) for those only called from other kernels. Neither
# builds a C callback wrapper. See "Compile time" above.
KERNEL: dict[str, Any] = {"cache": True, "nogil": True, "no_cfunc_wrapper": True}
HELPER: dict[str, Any] = {**KERNEL, "no_cpython_wrapper": True}

# _POW2[k + 1075] = 2.0**k for k in [-1074, 0], and 0 below: a table lookup is cheaper
# than ldexp in the inner loops.
_POW2 = np.array([0.0] + [2.0**k for k in range(-1074, 1)])


@njit(cache=True, nogil=True, inline="always")
def pow2(shift):
    """2.0**shift for shift <= 0 (0 below the float64 range)."""
    return _POW2[max(shift, -1075) + 1075]


@njit(cache=True, nogil=True, inline="always")
def times_pow2(value, exponent):
    """value * 2**exponent; 0 below the float64 range (subnormal results may flush)."""
    if exponent <= 0:
        return value * pow2(exponent)
    return math.ldexp(value, min(exponent, 2000))


@njit(cache=True, nogil=True, inline="always")
def add(total, exponent, value, value_exponent):
    """(total * 2**exponent + value * 2**value_exponent) as (mantissa, exponent),
    keeping the larger exponent (not normalised); a zero value changes nothing."""
    if value == 0.0:
        return total, exponent
    if exponent == EMPTY:
        return value, value_exponent
    if value_exponent > exponent:
        return total * pow2(exponent - value_exponent) + value, value_exponent
    return total + value * pow2(value_exponent - exponent), exponent


@njit(cache=True, nogil=True, inline="always")
def normalised(value, exponent):
    """(mantissa with |m| in [0.5, 1), exponent), or (0.0, EMPTY) for zero."""
    if value == 0.0 or exponent == EMPTY:
        return 0.0, EMPTY
    mantissa, shift = math.frexp(value)
    return mantissa, exponent + shift


@njit(**HELPER, fastmath=FAST_MATH)
def normalise(vector, size):
    """Scale vector[:size] so that max |value| is in [0.5, 1); RETURNS the exponent
    taken out, or EMPTY for a zero vector."""
    largest = 0.0
    for h in range(size):
        magnitude = abs(vector[h])
        if magnitude > largest:
            largest = magnitude
    if largest == 0.0:
        return EMPTY
    exponent = math.frexp(largest)[1]
    if exponent != 0:
        factor = math.ldexp(1.0, -exponent)
        for h in range(size):
            vector[h] *= factor
    return exponent


@njit(**HELPER, fastmath=FAST_MATH)
def accumulate(target, start, size, target_exponent, source, source_exponent):
    """target[start:start+size] (scaled by target_exponent) += source[:size] (scaled by
    source_exponent); RETURNS the new exponent of the (renormalised) target."""
    if source_exponent == EMPTY or target_exponent == EMPTY:  # nothing, or a copy
        return add_scaled(target, start, size, target_exponent, source, source_exponent)
    exponent = add_scaled(target, start, size, target_exponent, source, source_exponent)
    shift = normalise(target[start : start + size], size)
    return EMPTY if shift == EMPTY else exponent + shift


@njit(**HELPER, fastmath=FAST_MATH)
def add_scaled(target, start, size, target_exponent, source, source_exponent):
    """``accumulate`` without renormalising: RETURNS the larger exponent. The sum's
    mantissas may leave [0.5, 1) (grow with the terms added, or fall to zero when
    signed terms cancel); scaling by powers of two is exact above float64's subnormal
    range, so the value is the same either way. A vector that many terms are added to
    is normalised once, before it is used, instead of after every term."""
    if source_exponent == EMPTY:
        return target_exponent
    if target_exponent == EMPTY:
        for h in range(size):
            target[start + h] = source[h]
        return source_exponent
    if source_exponent > target_exponent:
        factor = pow2(target_exponent - source_exponent)
        for h in range(size):
            target[start + h] = target[start + h] * factor + source[h]
        return source_exponent
    factor = pow2(source_exponent - target_exponent)
    for h in range(size):
        target[start + h] += source[h] * factor
    return target_exponent


@njit(**HELPER, fastmath=False)
def divide_by_largest(values, start, size):
    """Divide values[start:start + size] by its largest entry; RETURNS the log of it
    (-inf, values unchanged, when all are zero). The gold-tree EM kernels' scaling
    (``estimators.em.kernels``): non-negative vectors, a log factor per node."""
    largest = 0.0
    for h in range(size):
        largest = max(largest, values[start + h])
    if largest <= 0.0:
        return -np.inf
    for h in range(size):
        values[start + h] /= largest
    return math.log(largest)


@njit(**HELPER, fastmath=False)
def grow(array, needed):
    """array, or a copy with room for at least `needed` rows (kernels grow scratch
    arrays between cells, never in their inner loops)."""
    if needed <= array.shape[0]:
        return array
    shape = (max(needed, 2 * array.shape[0]),) + array.shape[1:]
    bigger = np.empty(shape, array.dtype)
    # Copied element by element: a slice assignment from an array makes numba compile
    # its shape-mismatch error message (string formatting), seconds of a cold start.
    source = array.reshape(array.size)
    target = bigger.reshape(bigger.size)
    for k in range(source.shape[0]):
        target[k] = source[k]
    return bigger
