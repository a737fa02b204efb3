"""A tiny BibTeX reader for the tests, independent of ``pilot.export``.

It follows BibTeX's own rules where they bite: field values are delimited by braces counted *without*
regard to backslashes (so ``\\{`` unbalances an entry exactly as it would for ``bibtex``), keys end at
the first comma, and an entry must close with a brace. It raises ``ValueError`` on anything malformed.
"""

from __future__ import annotations

import re

_ACCENT_CMDS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
                ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
                "r": "\u030a", "d": "\u0323"}  # fmt: skip
_NAMED = {
    "textbackslash": "\\", "textbraceleft": "{", "textbraceright": "}", "textasciitilde": "~",
    "textasciicircum": "^", "textless": "<", "textgreater": ">", "ss": "ß", "ae": "æ", "AE": "Æ", "o": "ø",
    "O": "Ø", "aa": "å", "AA": "Å", "oe": "œ", "OE": "Œ", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ",
}  # fmt: skip


def parse(text: str) -> list[dict[str, str]]:
    """Entries as dicts with ``ENTRYTYPE``, ``ID`` and the raw (still LaTeX) field values."""
    entries = []
    pos = 0
    while (at := text.find("@", pos)) != -1:
        m = re.compile(r"@(\w+)\s*\{\s*([^,\s{}]+)\s*,").match(text, at)
        if not m:
            raise ValueError(f"malformed entry header at {at}: {text[at : at + 40]!r}")
        entry = {"ENTRYTYPE": m.group(1).lower(), "ID": m.group(2)}
        pos = m.end()
        while True:
            fm = re.compile(r"\s*(\w+)\s*=\s*\{").match(text, pos)
            if not fm:
                close = re.compile(r"\s*\}").match(text, pos)
                if not close:
                    raise ValueError(f"entry {entry['ID']}: expected a field or '}}' at {text[pos : pos + 40]!r}")
                pos = close.end()
                break
            depth, i = 1, fm.end()
            while depth:
                if i >= len(text):
                    raise ValueError(f"entry {entry['ID']}: unbalanced braces in field {fm.group(1)}")
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            name = fm.group(1).lower()
            if name in entry:
                raise ValueError(f"entry {entry['ID']}: field {name} twice")
            entry[name] = text[fm.end() : i - 1]
            pos = i
            sep = re.compile(r"\s*,").match(text, pos)
            if sep:
                pos = sep.end()
        entries.append(entry)
    return entries


def to_text(latex: str) -> str:
    """Undo the escaping the exporter does, to compare with the original string."""
    import unicodedata

    def accent(m: re.Match) -> str:
        base = m.group(2)
        base = {"\\i": "i", "\\j": "j"}.get(base, base)
        return unicodedata.normalize("NFC", base + _ACCENT_CMDS[m.group(1)])

    # literal braces/backslashes become placeholders so that removing grouping braces below cannot eat them
    named = {**_NAMED, "textbraceleft": "\ue000", "textbraceright": "\ue001", "textbackslash": "\ue002"}
    s = re.sub(r"\\([a-zA-Z]+)\{\}", lambda m: named.get(m.group(1), m.group(0)), latex)
    s = re.sub(r"\{\\([`'^\"~=.uvHckrd])\{?(\\[ij]|[A-Za-z])\}?\}", accent, s)
    s = re.sub(r"\{\\([a-zA-Z]+)\}", lambda m: named.get(m.group(1), m.group(0)), s)
    s = re.sub(r"\\([&%$#_])", r"\1", s)
    s = s.replace("---", "\u2014").replace("--", "\u2013")
    # remaining grouping braces (case protection) carry no text
    s = re.sub(r"[{}]", "", s)
    return s.replace("\ue000", "{").replace("\ue001", "}").replace("\ue002", "\\")
