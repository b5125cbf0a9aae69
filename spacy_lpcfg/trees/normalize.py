"""Standard treebank normalisation: empty elements, indices, function tags.

Every reader marks empty elements as preterminals tagged ``EMPTY_TAG``
(``-NONE-``), whatever the corpus writes (PTB ``(-NONE- *T*-1)``, PPCHE
``(NP-SBJ *pro*)``, CESS ``(sn.e-SUJ *0*)``), so this module needs no format
knowledge beyond the label scheme.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from .labels import LabelScheme, get_scheme
from .tree import EMPTY_TAG, ROOT_LABEL, Tree


@dataclass(frozen=True)
class NormalizeOptions:
    """remove_empty (bool): delete empty elements and the phrases left without words.
    strip_indices (bool): drop coindices and gapping indices (``NP-SBJ-1`` -> ``NP-SBJ``).
    keep_functions (bool): keep function tags (``NP-SBJ``) or reduce to the category (``NP``).
    """

    remove_empty: bool = True
    strip_indices: bool = True
    keep_functions: bool = True


def map_phrase_labels(tree: Tree, relabel: Callable[[str], str]) -> Tree:
    """Apply ``relabel`` to every phrasal label below the root; preterminals are kept."""
    return cast(Tree, _rebuild(tree, relabel, remove_empty=False))  # nothing removed


def strip_functions(tree: Tree, scheme: str | LabelScheme) -> Tree:
    """The tree with function tags (and indices) removed from phrase labels."""
    scheme = get_scheme(scheme)
    return map_phrase_labels(tree, lambda label: scheme.normalize(label, keep_functions=False))


def normalize(
    tree: Tree, scheme: str | LabelScheme, options: NormalizeOptions = NormalizeOptions()
) -> Tree | None:
    """Normalise one tree; None when nothing is left (a tree of empty elements only)."""
    scheme = get_scheme(scheme)
    relabel = None
    if options.strip_indices or not options.keep_functions:
        keep = options.keep_functions
        if options.strip_indices:

            def relabel(label: str) -> str:
                return _normalized_label(scheme, label, keep)

        else:

            def relabel(label: str) -> str:  # drop functions, keep the index
                parsed = scheme.split(label)
                base = scheme.join(parsed.category)
                if parsed.index is None:
                    return base
                sep = "" if parsed.index.startswith("=") else "-"
                return f"{base}{sep}{parsed.index}"

    return _rebuild(tree, relabel, remove_empty=options.remove_empty)


@functools.lru_cache(maxsize=1 << 16)
def _normalized_label(scheme: LabelScheme, label: str, keep_functions: bool) -> str:
    # Shared across calls: a treebank has few distinct labels but millions of nodes.
    return scheme.normalize(label, keep_functions=keep_functions)


def _rebuild(tree: Tree, relabel, *, remove_empty: bool) -> Tree | None:
    # Iterative post-order; each frame collects the rebuilt children of one node.
    results: list[list[Tree]] = [[]]
    stack: list[tuple[Tree, bool]] = [(tree, False)]
    while stack:
        node, visited = stack.pop()
        if node.word is not None:
            if not (remove_empty and node.label == EMPTY_TAG):
                results[-1].append(node)
            continue
        if not visited:
            results.append([])
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.children))
            continue
        children = tuple(results.pop())
        if not children:
            continue
        label = node.label
        if relabel is not None and node is not tree and label != ROOT_LABEL:
            label = relabel(label)
        if (
            label == node.label
            and len(children) == len(node.children)
            and all(a is b for a, b in zip(children, node.children))
        ):
            results[-1].append(node)
        else:
            results[-1].append(Tree(label, children))
    out = results[0]
    return out[0] if out else None
