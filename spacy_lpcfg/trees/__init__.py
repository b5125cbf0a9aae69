"""Trees, treebank readers and tree transforms (imports nothing above it)."""

from .brackets import parse_tree
from .labels import Label, LabelScheme, get_scheme
from .tree import EMPTY_TAG, ROOT_LABEL, Tree

__all__ = ["EMPTY_TAG", "ROOT_LABEL", "Label", "LabelScheme", "Tree", "get_scheme", "parse_tree"]
