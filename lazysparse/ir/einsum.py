"""Parsing NumPy einsum subscripts into integer index labels. User text never leaves this module
except inside error messages: letters become integers (``'A'..'Z'`` -> 0..25, ``'a'..'z'`` ->
26..51, so sorting the integers sorts the letters the way NumPy does, uppercase first) and the
broadcast dimensions of ``...`` become ``ELLIPSIS + k``."""
from __future__ import annotations

import string
from lazysparse.errors import shown

ELLIPSIS = 52  # label of the first broadcast dimension; broadcast dims are right-aligned
_LETTERS = string.ascii_uppercase + string.ascii_lowercase
_CODE = {c: k for k, c in enumerate(_LETTERS)}


def label_name(label: int) -> str:
    """How a label reads in an error message."""
    return _LETTERS[label] if label < ELLIPSIS else f"...[{label - ELLIPSIS}]"


def _term(text: str, where: str):
    """Split one operand's subscripts into (labels before ..., has ellipsis, labels after ...)."""
    if text.count("...") > 1:
        raise ValueError(f"einsum: subscripts {shown(text)} of {where} contain more than one ellipsis")
    head, dots, tail = text.partition("...")
    parts = []
    for part in (head, tail):
        labels = []
        for ch in part:
            if ch == ".":
                raise ValueError(f"einsum: subscripts {shown(text)} of {where} contain a '.' that is not "
                                 "part of an ellipsis ('...')")
            if ch not in _CODE:
                raise ValueError(f"einsum: invalid subscript {shown(ch)} in {where}; subscripts must be "
                                 "ASCII letters")
            labels.append(_CODE[ch])
        parts.append(labels)
    return parts[0], bool(dots), parts[1]


def parse_einsum(subscripts, shapes):
    """``(input labels per operand, output labels)`` for an einsum over operands of ``shapes``.

    >>> parse_einsum("ij,jk", [(2, 3), (3, 4)])
    ([(34, 35), (35, 36)], (34, 36))
    >>> parse_einsum("...i->...", [(5, 6, 7)])
    ([(52, 53, 34)], (52, 53))
    """
    if not isinstance(subscripts, str):
        raise TypeError("einsum: subscripts must be a string such as 'ij,jk->ik' (the interleaved "
                        f"form einsum(op, sublist, ...) is not supported), got {type(subscripts).__name__}")
    # the arrow is checked before spaces go: "- >" is no arrow for NumPy
    rest = subscripts.replace("->", "")
    if subscripts.count("->") > 1 or "-" in rest or ">" in rest:
        raise ValueError(f"einsum: subscripts {shown(subscripts)} do not contain a proper '->' output")
    if "." in subscripts.replace("...", ""):  # before spaces go too: ". .." is no ellipsis
        raise ValueError(f"einsum: subscripts {shown(subscripts)} contain a '.' that is not part of an "
                         "ellipsis ('...')")
    text = subscripts.replace(" ", "")  # NumPy ignores spaces (only: a tab or newline is an error)
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: subscripts {shown(subscripts)} name {len(terms)} operand(s) but "
                         f"{len(shapes)} were given")
    parsed = []
    nbcast = 0
    for k, (t, shape) in enumerate(zip(terms, shapes)):
        head, ell, tail = _term(t, f"operand {k}")
        named, nd = len(head) + len(tail), len(shape)
        if named > nd or (not ell and named != nd):
            raise ValueError(f"einsum: operand {k} of shape {tuple(shape)} has {nd} dimension(s) but "
                             f"subscripts {shown(t)} name {named}")
        nb = nd - named if ell else 0
        nbcast = max(nbcast, nb)
        parsed.append((head, nb, tail))
    # broadcast dims of an operand are the last ones of the common broadcast shape
    ins = [tuple(h) + tuple(range(ELLIPSIS + nbcast - nb, ELLIPSIS + nbcast)) + tuple(t)
           for h, nb, t in parsed]
    if arrow:
        head, ell, tail = _term(rhs, "the output")
        if nbcast and not ell:
            raise ValueError(f"einsum: subscripts {shown(subscripts)}: operands have broadcast dimensions "
                             "but the output has no '...' to place them")
        out = tuple(head) + tuple(range(ELLIPSIS, ELLIPSIS + nbcast)) + tuple(tail)
        seen = {l for s in ins for l in s}
        for l in head + tail:
            if l not in seen:
                raise ValueError(f"einsum: output subscript {shown(label_name(l))} in {shown(subscripts)} "
                                 "never appears in an input")
        if len(set(out)) != len(out):
            dup = next(l for l in out if out.count(l) > 1)
            raise ValueError(f"einsum: output subscript {shown(label_name(dup))} appears more than once "
                             f"in {shown(subscripts)}")
    else:
        # implicit output: broadcast dims, then the letters used exactly once, in sorted order
        counts = {}
        for s in ins:
            for l in s:
                counts[l] = counts.get(l, 0) + 1
        once = sorted(l for l, c in counts.items() if c == 1 and l < ELLIPSIS)
        out = tuple(range(ELLIPSIS, ELLIPSIS + nbcast)) + tuple(once)
    return ins, out
