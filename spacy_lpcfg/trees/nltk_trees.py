"""``nltk.Tree`` of our trees, for code written for NLTK or benepar (the ``nltk`` extra)."""

from __future__ import annotations

from typing import Any

from ..errors import Errors
from .tree import Tree


def to_nltk(tree: Tree | str) -> Any:
    """The ``nltk.Tree`` of a Tree or of Penn-bracketed text (one tree).

    RAISES ImportError: nltk is not installed (``pip install 'spacy-lpcfg[nltk]'``).
    """
    try:
        from nltk import Tree as NltkTree
    except ImportError:
        raise ImportError(Errors.E028) from None
    text = tree.pformat() if isinstance(tree, Tree) else tree
    return NltkTree.fromstring(text)
