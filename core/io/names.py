"""Joint names in BVH and ASF/AMC files: what each format can hold, and a reversible escape.

Both formats are whitespace-delimited text, so a name is only safe when the reader splits
it back into exactly the same characters:

- **BVH** reads a joint name as the tokens after ``ROOT``/``JOINT`` up to ``{`` or the end
  of the line, joined by one space, where a brace is a token of its own (``JOINT Arm}1``
  reads as ``Arm } 1``). A BVH name can hold anything except ``{``, whitespace other than
  single spaces between words (no leading, trailing or double spaces, no tabs, line breaks
  or Unicode spaces) and a ``}`` that is not a word of its own; it must not be empty.
  ``write_bvh`` writes such names verbatim and refuses any other
  (:func:`bvh_name_problem`); it never renames.
- **ASF/AMC** read a bone name as one whitespace-delimited word; ``#`` starts a comment and
  ``( ) ,`` separate tokens in the ASF. A bone name can hold anything except whitespace and
  ``# ( ) ,``; it must not be empty or ``root`` (any case: reserved for the root), and a bone
  with children must not be called ``end`` (any case, it would close ``:hierarchy``) or
  start with ``:`` (it would start a section). ``write_asf``/``write_amc`` refuse other
  names (:func:`asf_name_problem`); :func:`~.asf_amc.to_asf_layout`, which converts any
  skeleton to ASF's layout, escapes them with :func:`escape_asf_name` instead.

The escape is percent-encoding (as in URLs) of the UTF-8 bytes of each character the format
cannot hold at its place, plus every ``%`` followed by two hex digits (so that a literal
``%20`` is not mistaken for an escape): ``Bip01 L Thigh`` → ``Bip01%20L%20Thigh``, ``End`` →
``%45nd``, ``root`` → ``%72oot``, ``:x`` → ``%3Ax``, ``100%`` stays ``100%``, ``a%41`` →
``a%2541``. Names that need none keep every character. :func:`unescape_name`
(``urllib.parse.unquote``) gives the original back: ``unescape_name(escape_asf_name(n)) == n``
for every name.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

_HEX_PAIR = re.compile(r"[0-9A-Fa-f]{2}")
_ASF_SEPARATORS = "#(),"


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kept_space(name: str, i: int) -> bool:
    """Whether name[i] is a space BVH keeps: a single ASCII space between two non-spaces."""
    return 0 < i < len(name) - 1 and name[i] == " " and not name[i - 1].isspace() and not name[i + 1].isspace()


def _bvh_unsafe(name: str, i: int) -> bool:
    c = name[i]
    if c == "{":
        return True
    if c == "}":  # a token of its own: only at an end or next to a kept space
        before = i == 0 or _kept_space(name, i - 1)
        after = i == len(name) - 1 or _kept_space(name, i + 1)
        return not (before and after)
    return c.isspace() and not _kept_space(name, i)


def _asf_unsafe(name: str, i: int, has_children: bool = True) -> bool:
    c = name[i]
    if c.isspace() or c in _ASF_SEPARATORS:
        return True
    if i == 0:
        if name.lower() == "root":
            return True
        if has_children and (c == ":" or name.lower() == "end"):
            return True
    return False


def _problem(name: str, unsafe, what: str) -> str | None:
    if not isinstance(name, str):
        return f"{what} must be text, found {type(name).__name__}"
    if name == "":
        return f"{what} is empty"
    if not _encodable(name):
        return f"{what} has characters that cannot be encoded as UTF-8"
    bad = [name[i] for i in range(len(name)) if unsafe(name, i)]
    if not bad:
        return None
    shown = ", ".join(dict.fromkeys(repr(c) for c in bad))
    return f"{what} cannot hold {shown} here"


def bvh_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be written as a BVH joint name and read back unchanged (None when it can)."""
    problem = _problem(name, _bvh_unsafe, "a BVH joint name")
    if problem and not problem.endswith("here"):
        return problem
    if problem:
        return problem + " (BVH names are words separated by single spaces, without '{')"
    return None


def asf_name_problem(name: str, has_children: bool = True) -> str | None:
    """Why ``name`` cannot be an ASF/AMC bone name read back unchanged (None when it can).

    has_children: the bone heads a ``:hierarchy`` line, where ``end`` and a leading ``:``
    are keywords.
    """
    if isinstance(name, str) and name.lower() == "root":
        return "'root' (any case) is reserved for the ASF root"
    if isinstance(name, str) and has_children and name.lower() == "end":
        return "a bone with children cannot be called 'end' (any case): it would close :hierarchy"
    if isinstance(name, str) and has_children and name.startswith(":"):
        return "a bone with children cannot start with ':': it would start a new ASF section"
    problem = _problem(name, lambda n, i: _asf_unsafe(n, i, has_children), "an ASF bone name")
    if problem and problem.endswith("here"):
        return problem + " (ASF/AMC names are single words without '#', '(', ')' or ',')"
    return problem


def _escape(name: str, unsafe) -> str:
    if name == "":
        raise ValueError("an empty name cannot be escaped")
    if not _encodable(name):
        raise ValueError(f"name {name!r} has characters that cannot be encoded as UTF-8")
    out = []
    for i, c in enumerate(name):
        if unsafe(name, i) or (c == "%" and _HEX_PAIR.match(name, i + 1)):
            out.append("".join(f"%{b:02X}" for b in c.encode("utf-8")))
        else:
            out.append(c)
    return "".join(out)


def escape_bvh_name(name: str) -> str:
    """``name`` with the characters BVH cannot hold percent-encoded (see the module docstring)."""
    return _escape(name, _bvh_unsafe)


def escape_asf_name(name: str) -> str:
    """``name`` as an ASF/AMC bone name, any bone (with or without children), percent-encoded
    where needed (see the module docstring). ValueError for an empty or un-encodable name."""
    return _escape(name, _asf_unsafe)


def unescape_name(name: str) -> str:
    """The name an escape was made from (``urllib.parse.unquote``)."""
    return unquote(name)
