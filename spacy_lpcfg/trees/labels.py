"""Label schemes: how each treebank writes category, function tags and indices.

A phrase label is read as the canonical triple ``Label(category, functions,
index)``. Trees keep labels as strings in their corpus's own notation (so
output to users is what the treebank writes: ``NP-SBJ``, ``SUBJ+np``,
``sn-SUJ``); a ``LabelScheme`` splits and joins them. POS tags are never split
(IcePaHC ``N-N`` is a tag with a case suffix, Floresta ``v-fin`` a word class).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..errors import Errors


@dataclass(frozen=True, slots=True)
class Label:
    category: str
    functions: tuple[str, ...] = ()
    index: str | None = None


class LabelScheme:
    """Splits and joins phrase labels of one notation. Subclasses set ``name``."""

    name = ""

    def split(self, label: str) -> Label:
        raise NotImplementedError

    def join(self, category: str, functions: tuple[str, ...] = ()) -> str:
        raise NotImplementedError

    def category(self, label: str) -> str:
        return self._split(label).category

    def coarse_category(self, label: str, *, preterminal: bool = False) -> str:
        """The broad class of a category or POS tag, for the coarsest pruning pass:
        the category here (IcePaHC's case suffixes go: ``N-D`` -> ``N``)."""
        return self.category(label)

    def functions(self, label: str) -> tuple[str, ...]:
        return self._split(label).functions

    def _split(self, label: str) -> Label:
        """``split``, remembered for this module's schemes, which hold no state (a
        subclass's may)."""
        return _remembered_split(self, label) if id(self) in _BUILT_IN else self.split(label)

    def normalize(self, label: str, *, keep_functions: bool = True) -> str:
        """The label without indices (and without function tags unless kept)."""
        parsed = self.split(label)
        return self.join(parsed.category, parsed.functions if keep_functions else ())


class PennScheme(LabelScheme):
    """``CAT(-FUNC)*(-N)?(=N)?`` as in the Penn Treebank and the PPCHE family (IcePaHC).

    A trailing all-digit ``-N`` is a coindex (rarely two: ``-N-M``) and ``=...`` a gapping index;
    labels that start with ``-`` or ``=`` (``-NONE-``, ``-LRB-``) are atomic. ``|`` is
    not special (``ADVP|PRT`` is a category), as in EVALB.
    """

    name = "penn"

    def split(self, label: str) -> Label:
        if not label or label[0] in "-=":  # -NONE-, -LRB-, and no empty category
            return Label(label)
        head, _, gap = label.partition("=")
        parts = head.split("-")
        index = None
        numbers = 0  # trailing all-digit parts; a few labels have two (IcePaHC ``IP-MAT-1-1``)
        while len(parts) - numbers > 1 and parts[-1 - numbers].isdigit():
            numbers += 1
        if numbers:
            index = "-".join(parts[-numbers:])
            del parts[-numbers:]
        if gap:
            index = f"{index or ''}={gap}"
        return Label(parts[0], tuple(part for part in parts[1:] if part), index)

    def join(self, category: str, functions: tuple[str, ...] = ()) -> str:
        return "-".join((category, *functions)) if functions else category


class FlorestaScheme(LabelScheme):
    """``FUNCTION+form`` (Floresta Sintá(c)tica); the form follows the *last* ``+``.

    Discontinuity markers (a leading ``-`` on the function, a trailing ``-`` on
    the form) are dropped. A label without ``+`` is a bare form.
    """

    name = "floresta"

    def split(self, label: str) -> Label:
        function, plus, form = label.rpartition("+")
        if not plus:
            return Label(label)
        if len(form) > 1 and form.endswith("-"):
            form = form[:-1]
        if function.startswith("-"):
            function = function[1:]
        return Label(form, (function,) if function else ())

    def join(self, category: str, functions: tuple[str, ...] = ()) -> str:
        return f"{'&'.join(functions)}+{category}" if functions else category


class CessScheme(LabelScheme):
    """``category-FUNCTION`` (CESS-ESP): the function is everything after the first ``-``."""

    name = "cess"

    def split(self, label: str) -> Label:
        category, dash, function = label.partition("-")
        if not dash or not category:
            return Label(label)
        function = function.rstrip("-")
        return Label(category, (function,) if function else ())

    def join(self, category: str, functions: tuple[str, ...] = ()) -> str:
        return f"{category}-{'-'.join(functions)}" if functions else category

    def coarse_category(self, label: str, *, preterminal: bool = False) -> str:
        """Phrases lose their dotted features (``grup.nom.ms`` -> ``grup``,
        ``S.F.C`` -> ``S``); EAGLES tags keep category and type (``ncms000`` ->
        ``nc``, ``vmip3s0`` -> ``vm``; punctuation ``Fc`` stays)."""
        category = self.category(label)
        if preterminal:
            return category[:2] if category[:1].islower() else category
        return category.partition(".")[0] or category


SCHEMES: dict[str, LabelScheme] = {
    scheme.name: scheme for scheme in (PennScheme(), FlorestaScheme(), CessScheme())
}


_BUILT_IN = frozenset(id(scheme) for scheme in SCHEMES.values())  # they live as long


# A treebank's labels are a few thousand strings, and the parser and the function
# labeller ask for the category of each phrase several times: split each label once.
@functools.lru_cache(maxsize=1 << 16)
def _remembered_split(scheme: LabelScheme, label: str) -> Label:
    return scheme.split(label)


def get_scheme(name: str | LabelScheme) -> LabelScheme:
    if isinstance(name, LabelScheme):
        return name
    try:
        return SCHEMES[name]
    except KeyError:
        raise ValueError(Errors.E009.format(name=name, known=", ".join(SCHEMES))) from None
