"""spacy-lpcfg: latent-variable PCFG constituency parsers for spaCy.

Importing this package is cheap and has no side effects: numba, scipy,
scikit-learn and spaCy are imported by the modules that need them.
"""

from .about import __version__
from .errors import NonConstituentException, NotParsedError

__all__ = ["NonConstituentException", "NotParsedError", "__version__"]
