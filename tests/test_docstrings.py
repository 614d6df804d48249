"""House style for module docstrings: every module under lazysparse/ says what it is for in one
paragraph; details belong to the docstring of the function or class they describe."""
from __future__ import annotations

import ast
import pathlib
import re

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "lazysparse"

# modules allowed a docstring of several paragraphs (strict: a module on this list whose
# docstring is one paragraph fails until it is taken off)
PENDING = set()

MODULES = sorted(str(p.relative_to(PACKAGE.parent)) for p in PACKAGE.rglob("*.py"))


def paragraphs(path: str) -> int:
    """How many blank-line-separated paragraphs the module's docstring has (0: none)."""
    doc = ast.get_docstring(ast.parse((PACKAGE.parent / path).read_text()))
    if doc is None:
        return 0
    return sum(1 for block in re.split(r"\n\s*\n", doc.strip()) if block.strip())


@pytest.mark.parametrize("path", MODULES)
def test_module_docstring_is_one_paragraph(path, request):
    if path in PENDING:
        request.applymarker(pytest.mark.xfail(reason="docstring of several paragraphs", strict=True))
    assert paragraphs(path) == 1, f"{path}: module docstring has {paragraphs(path)} paragraphs"


def test_pending_names_existing_modules():
    assert PENDING <= set(MODULES), sorted(PENDING - set(MODULES))


def _with_examples():
    """The modules whose docstrings (module, classes, functions) hold doctest examples."""
    out = []
    for path in MODULES:
        text = (PACKAGE.parent / path).read_text()
        if ">>> " in text and "/bench/" not in path:
            out.append(path[:-3].replace("/", ".").removesuffix(".__init__"))
    return out


@pytest.mark.parametrize("module", _with_examples())
def test_docstring_examples_run(module):
    """Every example in a docstring runs and prints what it says (the guide's blocks are run by
    tests/bench/test_demo.py)."""
    import doctest
    import importlib
    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, report=False)
    assert result.failed == 0, f"{module}: {result.failed} of {result.attempted} examples failed (run doctest on it)"
