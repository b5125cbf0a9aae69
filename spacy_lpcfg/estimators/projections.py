"""Per-symbol cross-covariance SVD and the projections of every node (docs/design/architecture.md, 6.2).

For each symbol ``a`` with ``N_a`` nodes, the features of its nodes are
scaled (Cohen et al. 2013: feature ``f`` by ``sqrt(N_a / (count_a(f) + kappa))``),
giving ``Phi`` (N_a, d) and ``Psi`` (N_a, d'), and the empirical
cross-covariance ``Omega = Phi^T Psi / N_a`` is decomposed at the largest rank
any estimator will ask for. The projections of each node are then the inside
``y = U^T phi`` and the outside ``z = Sigma^{-1} V^T psi``. The first ``m``
columns of a rank-``k`` decomposition are the rank-``m`` decomposition, so one
fit serves every smaller number of states (``Projections.truncated``).

SVD method. Feature spaces are large (tens of thousands of columns for a
frequent symbol) and ``Omega`` is much denser than ``Phi`` and ``Psi``, so
large symbols never form it: a randomized range finder (Halko, Martinsson &
Tropp 2011, algorithm 4.4: subspace iteration with a QR after every product)
applies ``Omega`` as ``Phi^T (Psi x) / N_a``, whose cost is linear in the
nodes. It works on ``rank + oversample`` vectors at once (sparse times dense
blocks, not ARPACK's one matrix-vector product per Lanczos step) and its
``power_iterations`` QR steps keep it stable when singular values are close.
Accuracy matters here: with ``rank + 10`` vectors and 5 iterations the top 16
singular vectors of frequent PTB symbols (NN, VP^S, NP^PP) were up to 16
degrees off the exact ones, and clustering F1 moved by up to a point; twice the
rank and 7 iterations bring them within 2 degrees.
Symbols small enough that a dense SVD of ``Omega`` costs at most
``DENSE_SVD_COST`` (``d * d' * min(d, d')``) use LAPACK's exact SVD instead.
On the PTB sample (1,894 symbols, rank 32) this mix takes 2 s against 51 s for
dense SVDs throughout, and the randomized singular values are within 0.6% of
the largest of the exact ones.

The loop runs with one BLAS thread: its products are small, and OpenBLAS
threads made it ten times slower on a shared two-core machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import Errors
from ..grammar import SymbolTable
from ..progress import progress
from ..trees.nodes import TreebankNodes
from .features import NodeFeatures

if TYPE_CHECKING:  # scipy is imported where it is used: importing stays cheap
    from scipy import sparse

DENSE_SVD_COST = 1e7


@dataclass(frozen=True)
class Projections:
    """The SVD of every symbol's cross-covariance and the projections of its nodes.

    order (np.ndarray): int64[N], node ids grouped by symbol (stable within a symbol).
    offsets (np.ndarray): int64[n_symbols + 1], symbol a's nodes are
        ``order[offsets[a]:offsets[a + 1]]``.
    row (np.ndarray): int64[N], each node's row in its symbol's arrays.
    singular_values (tuple[np.ndarray, ...]): per symbol, float64[k_a], decreasing.
    inside (tuple[np.ndarray, ...]): per symbol, float64 (N_a, k_a), the y vectors.
    outside (tuple[np.ndarray, ...]): per symbol, float64 (N_a, k_a), the z vectors.
    factors (tuple[SymbolFactors | None, ...] | None): per symbol, the scaled
        features and projection matrices (``fit_projections(keep_factors=True)``),
        to project altered features (``noise.py``); None when not kept.
    """

    order: np.ndarray
    offsets: np.ndarray
    row: np.ndarray
    singular_values: tuple[np.ndarray, ...]
    inside: tuple[np.ndarray, ...]
    outside: tuple[np.ndarray, ...]
    factors: tuple[SymbolFactors | None, ...] | None = None

    @property
    def rank(self) -> np.ndarray:
        """int64[n_symbols]: the number of singular values computed per symbol."""
        return np.array([len(values) for values in self.singular_values], dtype=np.int64)

    @property
    def counts(self) -> np.ndarray:
        """int64[n_symbols]: nodes per symbol."""
        return np.diff(self.offsets)

    def nodes_of(self, symbol: int) -> np.ndarray:
        """int64[N_a]: the nodes of a symbol, in row order."""
        return self.order[self.offsets[symbol] : self.offsets[symbol + 1]]

    def truncated(self, n_states: np.ndarray) -> Projections:
        """The projections of a rank-``n_states[a]`` SVD per symbol (a view, no copy).

        n_states (np.ndarray): int[n_symbols], at most ``rank`` each.
        """
        if (np.asarray(n_states) > np.maximum(self.rank, 1)).any():
            raise ValueError(
                Errors.E011.format(
                    value="n_states", name="n_states", expected="at most the rank computed"
                )
            )
        factors = None
        if self.factors is not None:
            factors = tuple(
                None if f is None else f.truncated(int(m)) for f, m in zip(self.factors, n_states)
            )
        return Projections(
            self.order,
            self.offsets,
            self.row,
            tuple(values[:m] for values, m in zip(self.singular_values, n_states)),
            tuple(y[:, :m] for y, m in zip(self.inside, n_states)),
            tuple(z[:, :m] for z, m in zip(self.outside, n_states)),
            factors,
        )


@dataclass(frozen=True)
class SymbolFactors:
    """How a symbol's nodes were projected: ``y = inside_features @ inside_map`` and
    ``z = outside_features @ outside_map``.

    inside_features (sparse.csr_matrix): float64 (N_a, d), scaled features, rows in
        the symbol's row order, columns the features the symbol uses.
    inside_map (np.ndarray): float64 (d, k), U.
    outside_features (sparse.csr_matrix): float64 (N_a, d').
    outside_map (np.ndarray): float64 (d', k), V Sigma^-1.
    """

    inside_features: sparse.csr_matrix
    inside_map: np.ndarray
    outside_features: sparse.csr_matrix
    outside_map: np.ndarray

    def truncated(self, rank: int) -> SymbolFactors:
        return SymbolFactors(
            self.inside_features,
            self.inside_map[:, :rank],
            self.outside_features,
            self.outside_map[:, :rank],
        )


def requested_states(n_states: int | Mapping[str, int], symbols: SymbolTable) -> np.ndarray:
    """int64[n_symbols]: the states asked for per symbol (1 for TOP).

    n_states (int | Mapping[str, int]): one number for every symbol, or a number
        per symbol name (unlisted symbols get 1).
    RAISES ValueError: a number below 1, or a name that is not a symbol.
    """
    if isinstance(n_states, Mapping):
        states = np.ones(len(symbols), dtype=np.int64)
        for name, value in n_states.items():
            if name not in symbols:
                expected = "a mapping from the grammar's symbols to numbers of states"
                raise ValueError(Errors.E011.format(value=name, name="n_states", expected=expected))
            states[symbols.index(name)] = _positive_int(value)
    else:
        states = np.full(len(symbols), _positive_int(n_states), dtype=np.int64)
    states[symbols.root] = 1
    return states


def state_caps(
    counts: np.ndarray,
    singular_values: tuple[np.ndarray, ...],
    *,
    min_count_per_state: float,
    singular_value_threshold: float,
) -> np.ndarray:
    """int64[n_symbols]: the most states the data supports per symbol.

    A symbol gets at most ``count / min_count_per_state`` states (at least one),
    and no more than its singular values above ``singular_value_threshold``
    times the largest.
    """
    by_count = np.maximum(1, np.floor(counts / max(min_count_per_state, 1e-12))).astype(np.int64)
    by_spectrum = np.array(
        [
            max(1, int((values > singular_value_threshold * values[0]).sum())) if len(values) else 1
            for values in singular_values
        ],
        dtype=np.int64,
    )
    return np.minimum(by_count, by_spectrum)


def fit_projections(
    nodes: TreebankNodes,
    features: NodeFeatures,
    max_rank: np.ndarray,
    *,
    kappa: float = 5.0,
    oversample: int | None = None,
    power_iterations: int = 7,
    keep_factors: bool = False,
    random_state: np.random.Generator,
) -> Projections:
    """Scale the features, decompose every symbol's Omega, and project its nodes.

    nodes (TreebankNodes): the treebank (TOP nodes get empty projections).
    features (NodeFeatures): their features.
    max_rank (np.ndarray): int[n_symbols], the rank to compute per symbol (capped
        by the symbol's feature dimensions and node count).
    kappa (float): the feature-scaling pseudo-count.
    oversample (int | None): extra vectors of the randomized SVD; None: as many as the
        rank (at least 10).
    power_iterations (int): subspace iterations of the randomized SVD.
    keep_factors (bool): keep the scaled features and projection matrices (memory:
        about the size of the features plus the symbols' feature counts times ranks).
    random_state (np.random.Generator): for the randomized SVD.
    RETURNS (Projections): the projections.
    """
    from threadpoolctl import threadpool_limits

    n_symbols = len(nodes.symbols)
    order = np.argsort(nodes.symbol, kind="stable")
    offsets = np.searchsorted(nodes.symbol[order], np.arange(n_symbols + 1)).astype(np.int64)
    row = np.empty(len(order), dtype=np.int64)
    row[order] = np.arange(len(order)) - offsets[nodes.symbol[order]]
    inside = features.inside[order]
    outside = features.outside[order]
    with threadpool_limits(limits=1, user_api="blas"):
        values, ys, zs, factors = _decompose_symbols(
            nodes,
            inside,
            outside,
            offsets,
            max_rank,
            kappa,
            oversample,
            power_iterations,
            keep_factors,
            random_state,
        )
    return Projections(
        order,
        offsets,
        row,
        tuple(values),
        tuple(ys),
        tuple(zs),
        tuple(factors) if keep_factors else None,
    )


def _decompose_symbols(
    nodes,
    inside,
    outside,
    offsets,
    max_rank,
    kappa,
    oversample,
    power_iterations,
    keep_factors,
    random_state,
):
    """(singular values, y, z, factors) per symbol, over the rows of `inside` / `outside`
    grouped by symbol as `offsets` says."""
    n_symbols = len(nodes.symbols)
    values, ys, zs, factors = [], [], [], []
    root = nodes.symbols.root
    for a in progress(range(n_symbols), desc="SVD", unit="symbol"):
        lo, hi = int(offsets[a]), int(offsets[a + 1])
        if a == root or hi == lo:
            values.append(np.zeros(0))
            ys.append(np.zeros((hi - lo, 0)))
            zs.append(np.zeros((hi - lo, 0)))
            factors.append(None)
            continue
        phi = _scaled_rows(inside, lo, hi, kappa)
        psi = _scaled_rows(outside, lo, hi, kappa)
        rank = int(min(max_rank[a], phi.shape[1], psi.shape[1], hi - lo))
        u, s, vt = truncated_svd(phi, psi, rank, oversample, power_iterations, random_state)
        kept = s > s[0] * 1e-12 if len(s) else s > 0  # drop numerically zero directions
        u, s, vt = u[:, kept], s[kept], vt[kept]
        outside_map = vt.T / s
        values.append(s)
        ys.append(np.asarray(phi @ u))
        zs.append(np.asarray(psi @ outside_map))
        factors.append(SymbolFactors(phi, u, psi, outside_map) if keep_factors else None)
    return values, ys, zs, factors


def truncated_svd(
    phi: sparse.csr_matrix,
    psi: sparse.csr_matrix,
    rank: int,
    oversample: int | None,
    power_iterations: int,
    random_state: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The top ``rank`` singular triplets of ``Omega = phi^T psi / N``.

    phi (sparse.csr_matrix): (N, d). psi (sparse.csr_matrix): (N, d').
    RETURNS (tuple): U (d, rank), s (rank,), Vt (rank, d'), with each column of U
        signed so that its largest entry is positive (a deterministic choice).
    """
    n = phi.shape[0]
    if rank <= 0:
        return np.zeros((phi.shape[1], 0)), np.zeros(0), np.zeros((0, psi.shape[1]))
    d, d_out = phi.shape[1], psi.shape[1]
    if d * d_out * min(d, d_out) <= DENSE_SVD_COST:
        omega = (phi.T @ psi).toarray() / n
        u, s, vt = np.linalg.svd(omega, full_matrices=False)
    else:
        u, s, vt = _randomized_svd(phi, psi, rank, oversample, power_iterations, random_state)
    u, s, vt = u[:, :rank], s[:rank], vt[:rank]
    signs = np.sign(u[np.abs(u).argmax(axis=0), np.arange(u.shape[1])])
    signs[signs == 0] = 1.0
    return u * signs, s, vt * signs[:, None]


def _randomized_svd(phi, psi, rank, oversample, power_iterations, random_state):
    """Randomized subspace iteration on Omega = phi^T psi / N, never forming Omega."""
    n = phi.shape[0]
    extra = max(10, rank) if oversample is None else oversample
    size = min(rank + extra, phi.shape[1], psi.shape[1])
    phi_t = phi.T.tocsr()
    psi_t = psi.T.tocsr()

    def omega(block):  # Omega @ block: (d', k) -> (d, k)
        return phi_t @ (psi @ block) / n

    def omega_t(block):  # Omega^T @ block: (d, k) -> (d', k)
        return psi_t @ (phi @ block) / n

    q = np.linalg.qr(omega(random_state.standard_normal((psi.shape[1], size))))[0]
    for _ in range(power_iterations):
        q = np.linalg.qr(omega_t(q))[0]
        q = np.linalg.qr(omega(q))[0]
    b = omega_t(q).T  # (size, d') = Q^T Omega
    small_u, s, vt = np.linalg.svd(b, full_matrices=False)
    return q @ small_u, s, vt


def _scaled_rows(matrix: sparse.csr_matrix, lo: int, hi: int, kappa: float) -> sparse.csr_matrix:
    """Rows lo:hi of an indicator matrix over the columns they use, each column scaled
    by sqrt(rows / (rows with the feature + kappa))."""
    from scipy import sparse

    start, stop = matrix.indptr[lo], matrix.indptr[hi]
    columns, local = np.unique(matrix.indices[start:stop], return_inverse=True)
    local = local.reshape(-1)
    counts = np.bincount(local, weights=matrix.data[start:stop] != 0, minlength=len(columns))
    scale = np.sqrt((hi - lo) / (counts + kappa))
    return sparse.csr_matrix(
        (matrix.data[start:stop] * scale[local], local, matrix.indptr[lo : hi + 1] - start),
        shape=(hi - lo, len(columns)),
    )


def _positive_int(value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(Errors.E011.format(value=value, name="n_states", expected="an int >= 1"))
    return int(value)
