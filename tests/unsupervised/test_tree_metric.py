"""The minimum-evolution decoder against brute force over all binary trees."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from spacy_lpcfg.unsupervised.tree_metric import minimum_evolution_tree


def binary_trees(i, j):
    """All binary bracketings of [i, j) as frozensets of spans of >= 2 words."""
    if j - i == 1:
        yield frozenset()
        return
    for k in range(i + 1, j):
        for left in binary_trees(i, k):
            for right in binary_trees(k, j):
                yield left | right | {(i, j)}


def undirected_cost(brackets, d, n):
    """Total edge length of the undirected tree, computed from the graph itself.

    Independent of the decoder: nodes are the words and the brackets other than
    the sentence; every edge's sides are found by walking the graph.
    """
    spans = sorted(brackets | {(w, w + 1) for w in range(n)}, key=lambda s: (s[0], -s[1]))
    nodes = [s for s in spans if s != (0, n)]
    parent = {}
    for span in nodes:
        enclosing = [o for o in spans if o != span and o[0] <= span[0] and span[1] <= o[1]]
        parent[span] = min(enclosing, key=lambda o: o[1] - o[0])
    adjacency = {node: set() for node in nodes}
    tops = [s for s in nodes if parent[s] == (0, n)]
    for node in nodes:
        if parent[node] != (0, n):
            adjacency[node].add(parent[node])
            adjacency[parent[node]].add(node)
    adjacency[tops[0]].add(tops[1])
    adjacency[tops[1]].add(tops[0])

    def leaves_beyond(node, came_from):
        seen, stack, out = {came_from, node}, [node], set()
        while stack:
            current = stack.pop()
            if current[1] - current[0] == 1:
                out.add(current[0])
            for nxt in adjacency[current]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return out

    def mean(x, y):
        return np.mean([d[a, b] for a in x for b in y])

    total = 0.0
    edges = {frozenset((a, b)) for a in adjacency for b in adjacency[a]}
    for edge in edges:
        u, v = sorted(edge, key=lambda s: s[1] - s[0])  # u a word if either is
        if u[1] - u[0] == 1 and v[1] - v[0] == 1:
            total += d[u[0], v[0]]
            continue
        g, h = [leaves_beyond(x, v) for x in adjacency[v] if x != u]
        if u[1] - u[0] == 1:
            total += 0.5 * (mean({u[0]}, g) + mean({u[0]}, h) - mean(g, h))
        else:
            a, b = [leaves_beyond(x, u) for x in adjacency[u] if x != v]
            cross = mean(a, g) + mean(a, h) + mean(b, g) + mean(b, h)
            total += 0.25 * cross - 0.5 * (mean(a, b) + mean(g, h))
    return total


def random_distances(rng, n):
    points = rng.normal(size=(n, 3))
    return np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_decoder_matches_brute_force_for_every_top_split(n):
    rng = np.random.default_rng(n)
    for _ in range(3):
        d = random_distances(rng, n)
        for s in range(1, n):
            candidates = [
                t
                for t in binary_trees(0, n)
                if all(not (a < s < b) for a, b in t if (a, b) != (0, n))
            ]
            costs = [undirected_cost(t, d, n) for t in candidates]
            cost, brackets = minimum_evolution_tree(d, top_split=s)
            assert cost == pytest.approx(min(costs))
            assert undirected_cost(frozenset(brackets), d, n) == pytest.approx(cost)
            assert (0, s) in brackets or s == 1
            assert (s, n) in brackets or s == n - 1


def test_free_top_split_is_the_minimum_over_all_trees():
    rng = np.random.default_rng(0)
    n = 6
    d = random_distances(rng, n)
    cost, brackets = minimum_evolution_tree(d)
    assert cost == pytest.approx(min(undirected_cost(t, d, n) for t in binary_trees(0, n)))
    assert len(brackets) == n - 1


def tree_metric(brackets, n, rng):
    """An exact additive metric: path lengths in the undirected tree, random edges."""
    spans = sorted(set(brackets) | {(w, w + 1) for w in range(n)})
    length = {s: rng.uniform(0.2, 2.0) for s in spans if s != (0, n)}
    # the root node is removed: its two child edges merge into the root edge
    path_up = {}
    for s in spans:
        chain, node = [], s
        while node != (0, n):
            chain.append(node)
            node = min(
                (o for o in spans if o != node and o[0] <= node[0] and node[1] <= o[1]),
                key=lambda o: o[1] - o[0],
            )
        path_up[s] = chain
    d = np.zeros((n, n))
    for a, b in itertools.combinations(range(n), 2):
        up_a, up_b = path_up[(a, a + 1)], path_up[(b, b + 1)]
        common = set(up_a) & set(up_b)
        d[a, b] = d[b, a] = sum(length[x] for x in up_a + up_b if x not in common)
    return d


@pytest.mark.parametrize("seed", range(10))
def test_exact_tree_metric_recovers_its_tree(seed):
    # The paper's consistency claim: with the true top split, the true tree is the minimum.
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 9))
    trees = list(binary_trees(0, n))
    truth = trees[int(rng.integers(len(trees)))]
    d = tree_metric(truth, n, rng)
    top = next(
        k
        for k in range(1, n)
        if all(not (a < k < b) for a, b in truth if (a, b) != (0, n))
        and ((0, k) in truth or k == 1)
        and ((k, n) in truth or k == n - 1)
    )
    _, brackets = minimum_evolution_tree(d, top_split=top)
    assert set(brackets) == set(truth)
