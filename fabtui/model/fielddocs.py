"""What each field of a model means: the docstring written under it in the class's source.

The models document their fields as attribute docstrings (`name: T = default` and a string on
the next line). Only the generated documents read them (the parser contract, the generator's
parameters in `topo templates`), so they are read from the source when such a document is
made, not at every import: pydantic's `use_attribute_docstrings` parsed the source of every
model class as it was defined, 40 % of the time it takes to import the models.
"""

from __future__ import annotations

import ast
import inspect
import sys
from functools import cache
from itertools import pairwise


@cache
def field_docs(cls: type) -> dict[str, str]:
    """Field name -> its attribute docstring, for `cls` and the classes it inherits from (a
    subclass's own docstring wins). Classes whose source cannot be read give none."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):  # without `object`
        definition = _classes(klass.__module__).get(klass.__qualname__)
        if definition is not None:
            docs.update(_own_docs(definition))
    return docs


@cache
def _classes(module_name: str) -> dict[str, ast.ClassDef]:
    """Every class defined in a module's source, by qualified name (the module is parsed
    once: `inspect.getsource` parsed it again for each class, 30 ms a class)."""
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError):
        return {}
    found: dict[str, ast.ClassDef] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                found[prefix + node.name] = node
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


def _own_docs(definition: ast.ClassDef) -> dict[str, str]:
    found: dict[str, str] = {}
    for statement, following in pairwise(definition.body):
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                and isinstance(following, ast.Expr) \
                and isinstance(following.value, ast.Constant) \
                and isinstance(following.value.value, str):
            found[statement.target.id] = inspect.cleandoc(following.value.value)
    return found
