"""Unsupervised bracketing: learning unlabelled constituents from text alone.

``SpectralBracketer`` is the spectral learner of Parikh, Cohen & Xing (2014)
(docs/design/architecture.md, section 9); ``CCM`` the constituent-context model of Klein &
Manning (2002) trained by EM, started by default from the spectral learner's
trees; ``RightBranching``, ``LeftBranching`` and
``RandomBranching`` the baselines. All follow ``base.Bracketer``: ``fit`` on
sentences (no trees), ``predict`` unlabelled trees; score them with
``evaluation.unlabeled.unlabeled_scores``; ``save_bracketer`` / ``load_bracketer``
write and read fitted ones (JSON and npz, no pickle).
"""

from .base import Bracketer
from .baselines import LeftBranching, RandomBranching, RightBranching
from .ccm import CCM
from .io import load_bracketer, save_bracketer
from .spectral import SpectralBracketer

BRACKETERS = {
    cls.name: cls
    for cls in (SpectralBracketer, CCM, RightBranching, LeftBranching, RandomBranching)
}

__all__ = [
    "BRACKETERS",
    "CCM",
    "Bracketer",
    "LeftBranching",
    "RandomBranching",
    "RightBranching",
    "SpectralBracketer",
    "load_bracketer",
    "save_bracketer",
]
