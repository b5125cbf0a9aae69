"""Unknown-word signatures: word classes for the words a lexicon does not know.

A signature scheme maps a word at a sentence position to a *chain* of class
names, finest first and always ending with ``UNK`` (the class of every unknown
word). A lexicon counts each rare training token in every class of its chain,
and at parse time uses the first class of the chain it has seen.

* ``BerkeleySignatures`` (English): the Berkeley parser's "level 5" classes.
  ``UNK`` plus one capitalisation feature (``-INITC``: capitalised first word
  of the sentence, with ``-KNOWNLC`` when its lowercase form is a known word;
  ``-CAPS``: other capitalised words and words with capitals not starting
  with a letter; ``-LC``: words with lowercase letters), ``-NUM`` (a digit),
  ``-DASH`` (a hyphen) and at most one suffix class: ``-s`` (length >= 3, not
  after s, i or u) or, for words of length >= 5 without a hyphen and not
  mixing digits and capitals, the first of ``-ed -ing -ion -er -est -ly -ity
  -y -al`` that matches. The chain is ``(signature, "UNK")``; a word with
  none of the features has the signature ``UNK`` itself, so it shares the
  class of all unknown words (the Berkeley parser gives exactly that
  distribution to any signature it has no counts for).
* ``GenericSignatures`` (any language): ``UNK-<shape>~<suffix>`` where the
  shape is ``PUNCT`` (no letter or digit) or a case class (``INITC``:
  capitalised first word of the sentence, ``CAP``: other capitalised words,
  ``CAPS``: capitals and no lowercase letter, ``LC``: the rest with letters)
  followed by ``-NUM`` / ``-DASH`` flags, and the suffix is the lowercased
  last ``j`` characters of a word with letters (``j = k, k-1, ..., 1``, never
  the whole word). The chain backs off one suffix character at a time, then
  to the shape alone, then to ``UNK``:
  ``("UNK-LC~ing", "UNK-LC~ng", "UNK-LC~g", "UNK-LC", "UNK")``.
* ``CJKSignatures`` (scripts written without spaces or case: Chinese,
  Japanese): ``UNK-<type>`` where the type lists the character types of the
  word (``HAN``, ``HIRA``, ``KATA``, ``HANGUL``, ``LATIN``, ``DIGIT``, ``OTHER``
  letters, ``PUNCT``), joined by ``+`` in that order (``HAN+DIGIT`` for "1998年",
  ``HAN+HIRA`` for "食べる"). Finer classes add, in turn, the last character
  (``UNK-HAN~…济``), the length class (``-1``, ``-2``, ``-3``, ``-4+``:
  ``UNK-HAN-2~…济``) and the first character (``UNK-HAN-2~经…济``; not for
  one-character words). Digits count as ``#`` and Latin letters in lowercase
  in the first and last characters. The last character is the coarsest
  because it is the head of most Chinese words (``者``, ``化``, ``性``) and
  carries the inflection of Japanese ones; names (three characters) and
  four-character idioms make the length next; the first character (a surname,
  a prefix such as ``第`` or ``不``) refines both. A class has the same parent
  in every chain, as the lexicon's smoothing needs:
  ``("UNK-HAN-2~经…济", "UNK-HAN-2~…济", "UNK-HAN~…济", "UNK-HAN", "UNK")``.

``get_signatures`` resolves the scheme names; "auto" is decided by the lexicon
from its training words (``choose_scheme``): "cjk" when most of the word tokens
with letters are in Chinese or Japanese scripts, else "berkeley" for English
and "generic" for other languages (what "auto" always meant before "cjk").
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable, Mapping

from ..errors import Errors

UNKNOWN_CLASS = "UNK"
SIGNATURE_SCHEMES = ("auto", "berkeley", "generic", "cjk")
# "auto" picks "cjk" when at least this share of the training tokens that have letters
# have Han, Hiragana or Katakana characters (Chinese and Japanese treebanks: nearly all;
# alphabetic ones: at most a few foreign words).
CJK_SHARE = 0.5
# Character types of the CJK signature, in the order a word's types are listed.
CHAR_TYPES = ("HAN", "HIRA", "KATA", "HANGUL", "LATIN", "DIGIT", "OTHER", "PUNCT")
CJK_SCRIPTS = frozenset({"HAN", "HIRA", "KATA"})  # scripts written without spaces
# Unicode blocks (first, last code point) of the scripts the CJK signature names.
SCRIPT_BLOCKS = (
    ("HAN", 0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    ("HAN", 0x3005, 0x3007),  # 々 (iteration mark), 〆, 〇
    ("HAN", 0x3400, 0x4DBF),  # extension A
    ("HAN", 0x4E00, 0x9FFF),  # unified ideographs
    ("HAN", 0xF900, 0xFAFF),  # compatibility ideographs
    ("HAN", 0x20000, 0x3134F),  # extensions B-G
    ("HIRA", 0x3040, 0x309F),
    ("KATA", 0x30A0, 0x30FF),  # with ー (the long vowel mark)
    ("KATA", 0x31F0, 0x31FF),
    ("KATA", 0xFF66, 0xFF9F),  # halfwidth katakana
    ("HANGUL", 0x1100, 0x11FF),
    ("HANGUL", 0x3130, 0x318F),
    ("HANGUL", 0xAC00, 0xD7AF),
)
MAX_LENGTH_CLASS = 4  # the CJK signature's length classes: 1, 2, 3, 4+
# Suffix classes of the Berkeley signature, tried in this order (so "-ity" wins over "-y").
BERKELEY_SUFFIXES = ("ed", "ing", "ion", "er", "est", "ly", "ity", "y", "al")

IsKnown = Callable[[str], bool]


class BerkeleySignatures:
    """The Berkeley parser's English unknown-word classes (its level 5)."""

    name = "berkeley"

    def chain(self, word: str, position: int, is_known: IsKnown) -> tuple[str, ...]:
        """The classes of `word` at `position`, finest first, ending with "UNK"."""
        signature = berkeley_signature(word, position, is_known)
        return (UNKNOWN_CLASS,) if signature == UNKNOWN_CLASS else (signature, UNKNOWN_CLASS)


class GenericSignatures:
    """Language-independent shape and suffix classes.

    suffix_length (int): the longest suffix k used (0: shape only).
    """

    name = "generic"

    def __init__(self, suffix_length: int = 3):
        self.suffix_length = suffix_length

    def chain(self, word: str, position: int, is_known: IsKnown) -> tuple[str, ...]:
        """The classes of `word` at `position`, finest first, ending with "UNK".

        is_known is not used: the classes do not depend on the vocabulary.
        """
        shape = word_shape(word, position)
        base = f"{UNKNOWN_CLASS}-{shape}"
        classes = []
        if shape != "PUNCT" and any(char.isalpha() for char in word):
            lowered = word.lower()
            for length in range(min(self.suffix_length, len(lowered) - 1), 0, -1):
                classes.append(f"{base}~{lowered[-length:]}")
        return (*classes, base, UNKNOWN_CLASS)


class CJKSignatures:
    """Character-type, length and first/last-character classes, for Chinese and Japanese."""

    name = "cjk"

    def chain(self, word: str, position: int, is_known: IsKnown) -> tuple[str, ...]:
        """The classes of `word`, finest first, ending with "UNK".

        position and is_known are not used: the scripts have no case.
        """
        if not word:
            return (UNKNOWN_CLASS,)
        base = f"{UNKNOWN_CLASS}-{word_type(word)}"
        length = min(len(word), MAX_LENGTH_CLASS)
        sized = f"{base}-{length}" + ("+" if length == MAX_LENGTH_CLASS else "")
        first, last = _char_key(word[0]), _char_key(word[-1])
        chain = (f"{sized}~…{last}", f"{base}~…{last}", base, UNKNOWN_CLASS)
        return chain if len(word) == 1 else (f"{sized}~{first}…{last}", *chain)


Signatures = BerkeleySignatures | GenericSignatures | CJKSignatures


def get_signatures(signature: str, language: str, suffix_length: int) -> Signatures:
    """The scheme named `signature`. "auto" gives the scheme of a lexicon with no training
    words to decide from: "berkeley" for English ("en"), else "generic" (see choose_scheme).
    """
    if signature not in SIGNATURE_SCHEMES:
        expected = "one of " + ", ".join(repr(name) for name in SIGNATURE_SCHEMES)
        raise ValueError(Errors.E011.format(value=signature, name="signature", expected=expected))
    if signature == "cjk":
        return CJKSignatures()
    if signature == "berkeley" or (signature == "auto" and language == "en"):
        return BerkeleySignatures()
    return GenericSignatures(suffix_length)


def choose_scheme(word_counts: Mapping[str, float], language: str) -> str:
    """The scheme "auto" stands for, given the training words and their token counts.

    "cjk" when at least CJK_SHARE of the tokens with letters have Han, Hiragana or
    Katakana characters; else "berkeley" for English ("en") and "generic" for other
    languages, whatever the script (so alphabetic treebanks keep their classes).
    """
    lettered = cjk = 0.0
    for word, count in word_counts.items():
        if any(char.isalpha() for char in word):
            lettered += count
            if any(_char_type(char) in CJK_SCRIPTS for char in word):
                cjk += count
    if lettered and cjk >= CJK_SHARE * lettered:
        return "cjk"
    return "berkeley" if language == "en" else "generic"


def word_type(word: str) -> str:
    """The character types of a word, in CHAR_TYPES order joined by "+": "HAN",
    "HAN+DIGIT" ("1998年"), "HAN+HIRA" ("食べる"), "KATA" ("コーヒー"), "PUNCT" ("。")."""
    found = {_char_type(char) for char in word}
    return "+".join(kind for kind in CHAR_TYPES if kind in found)


@functools.lru_cache(maxsize=65536)
def _char_type(char: str) -> str:
    if not char.isalnum():
        return "PUNCT"
    code = ord(char)
    for kind, first, last in SCRIPT_BLOCKS:
        if first <= code <= last:
            return kind
    if char.isdigit() or unicodedata.category(char) == "Nd":
        return "DIGIT"
    if char.isalpha() and unicodedata.name(char, "").split(" ")[:2] in (
        ["LATIN"],
        ["LATIN", "CAPITAL"],
        ["LATIN", "SMALL"],
        ["FULLWIDTH", "LATIN"],
    ):
        return "LATIN"
    return "OTHER"


def _char_key(char: str) -> str:
    """A first or last character as the CJK signature names it: digits as "#", Latin
    letters in lowercase (full-width ones included), others as they are."""
    kind = _char_type(char)
    if kind == "DIGIT":
        return "#"
    return unicodedata.normalize("NFKC", char).lower() if kind == "LATIN" else char


def berkeley_signature(word: str, position: int, is_known: IsKnown) -> str:
    """The Berkeley parser's level-5 signature of an unknown English word.

    word (str): the word.
    position (int): its 0-based position in the sentence (0 allows "-INITC").
    is_known (Callable[[str], bool]): whether a word is in the known vocabulary
        (for "-KNOWNLC").
    RETURNS (str): e.g. "UNK-INITC-KNOWNLC-ing", "UNK-LC-NUM-s", "UNK-CAPS".
    """
    if not word:
        return UNKNOWN_CLASS
    n_capitals = 0
    has_digit = has_dash = has_lower = False
    for char in word:
        if char.isdigit():
            has_digit = True
        elif char == "-":
            has_dash = True
        elif char.isalpha():
            if char.islower():
                has_lower = True
            elif _is_titlecase(char):  # a title-case letter counts as both
                has_lower = True
                n_capitals += 1
            else:
                n_capitals += 1
    parts = [UNKNOWN_CLASS]
    first = word[0]
    lowered = word.lower()
    if first.isupper() or _is_titlecase(first):
        if position == 0 and n_capitals == 1:
            parts.append("-INITC")
            if is_known(lowered):
                parts.append("-KNOWNLC")
        else:
            parts.append("-CAPS")
    elif not first.isalpha() and n_capitals > 0:
        parts.append("-CAPS")
    elif has_lower:
        parts.append("-LC")
    if has_digit:
        parts.append("-NUM")
    if has_dash:
        parts.append("-DASH")
    if lowered.endswith("s") and len(word) >= 3:
        if lowered[-2] not in "siu":  # not -ss, -is, -us
            parts.append("-s")
    elif len(word) >= 5 and not has_dash and not (has_digit and n_capitals > 0):
        suffix = next((s for s in BERKELEY_SUFFIXES if lowered.endswith(s)), None)
        if suffix is not None:
            parts.append("-" + suffix)
    return "".join(parts)


def word_shape(word: str, position: int) -> str:
    """The shape class of the generic signature: "PUNCT", or a case class with flags.

    RETURNS (str): e.g. "INITC" ("Running" at 0), "CAP", "CAPS" ("USA"),
        "LC-DASH" ("anti-war"), "LC-NUM" ("1990s"), "NUM" ("1,000"), "PUNCT" ("--").
    """
    if not any(char.isalnum() for char in word):
        return "PUNCT"
    has_upper = any(char.isupper() or _is_titlecase(char) for char in word)
    has_lower = any(char.islower() for char in word)
    if has_upper and has_lower and (word[0].isupper() or _is_titlecase(word[0])):
        parts = ["INITC" if position == 0 else "CAP"]
    elif has_upper and not has_lower:
        parts = ["CAPS"]
    elif has_lower:
        parts = ["LC"]
    elif any(char.isalpha() for char in word):  # letters of a script without case
        parts = ["NOCASE"]
    else:
        parts = []
    if any(char.isdigit() for char in word):
        parts.append("NUM")
    if "-" in word:
        parts.append("DASH")
    return "-".join(parts) if parts else "OTHER"


def _is_titlecase(char: str) -> bool:
    # str.istitle() is also true for plain capitals; the letter category is not
    return unicodedata.category(char) == "Lt"
