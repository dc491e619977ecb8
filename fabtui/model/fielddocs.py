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
import textwrap
from functools import cache
from itertools import pairwise


@cache
def field_docs(cls: type) -> dict[str, str]:
    """Field name -> its attribute docstring, for `cls` and the classes it inherits from (a
    subclass's own docstring wins). Classes whose source cannot be read give none."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):  # without `object`
        docs.update(_own_docs(klass))
    return docs


def _own_docs(klass: type) -> dict[str, str]:
    try:
        source = textwrap.dedent(inspect.getsource(klass))
    except (OSError, TypeError):
        return {}
    tree = ast.parse(source)
    definition = tree.body[0] if tree.body else None
    if not isinstance(definition, ast.ClassDef):
        return {}
    body = definition.body
    found: dict[str, str] = {}
    for statement, following in pairwise(body):
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                and isinstance(following, ast.Expr) \
                and isinstance(following.value, ast.Constant) \
                and isinstance(following.value.value, str):
            found[statement.target.id] = inspect.cleandoc(following.value.value)
    return found
