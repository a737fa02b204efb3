"""A form for a node's params, generated from its operator's pydantic params model.

Each field becomes the input its type calls for — a checkbox for a flag, a number box with the model's
bounds, a menu for a choice, checkboxes for a list of choices, a comma-separated line for a list of
words, JSON for anything richer — labelled with its description and its true default (a list that
defaults to empty says "default: none", not "required"). :func:`read_form` turns what the browser sent
back into params: typed, validated by the same model, and limited to what the user set, so the
workflow's diff shows exactly the change.

    html = form_html(node, op_cls)               # the form (every string escaped)
    params = read_form(op_cls, node.params, values)   # raises FormError with one line per bad field
"""

from __future__ import annotations

import html
import json
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

esc = html.escape
Kind = Literal["bool", "tristate", "int", "float", "choice", "choices", "words", "text", "json"]


class FormError(ValueError):
    """What the user typed cannot be these params; the message names each field."""


@dataclass(frozen=True)
class FormField:
    name: str
    kind: Kind
    default: Any
    required: bool
    optional: bool  # None is allowed
    description: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """(the annotation without ``| None``, whether None was allowed)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], len(args) < len(typing.get_args(annotation))
    return annotation, False


def _bounds(info: FieldInfo) -> tuple[float | None, float | None]:
    lo = hi = None
    for m in info.metadata:
        lo = getattr(m, "ge", None) if getattr(m, "ge", None) is not None else lo
        hi = getattr(m, "le", None) if getattr(m, "le", None) is not None else hi
    return lo, hi


def fields_of(model: type[BaseModel]) -> list[FormField]:
    out = []
    for name, info in model.model_fields.items():
        ann, optional = _unwrap(info.annotation)
        origin, args = typing.get_origin(ann), typing.get_args(ann)
        choices: tuple[str, ...] = ()
        if ann is bool:
            kind: Kind = "tristate" if optional else "bool"
        elif ann is int:
            kind = "int"
        elif ann is float:
            kind = "float"
        elif origin is Literal:
            kind, choices = "choice", tuple(str(a) for a in args)
        elif origin is list and args and typing.get_origin(args[0]) is Literal:
            kind, choices = "choices", tuple(str(a) for a in typing.get_args(args[0]))
        elif origin is list and args and args[0] is str:
            kind = "words"
        elif ann is str:
            kind = "text"
        else:
            kind = "json"
        required = info.is_required()
        default = None if required else info.get_default(call_default_factory=True)
        lo, hi = _bounds(info)
        out.append(FormField(name, kind, default, required, optional, info.description or "", choices, lo, hi))
    return out


def default_text(f: FormField) -> str:
    if f.required:
        return "required"
    if f.default is None or f.default in ([], {}, ""):
        return "none"
    if isinstance(f.default, bool):
        return "on" if f.default else "off"
    return json.dumps(f.default, ensure_ascii=False) if not isinstance(f.default, str) else f.default


def help_markdown(op_cls: Any) -> str:
    """The operator's description and each param with its type and true default (markdown)."""
    rows = []
    for f in fields_of(op_cls.Params):
        kind = {"words": "list of words", "choices": "any of " + ", ".join(f.choices), "choice": " | ".join(f.choices)}
        what = kind.get(f.kind, f.kind.replace("tristate", "yes / no / any"))
        rows.append(
            f"- `{f.name}` ({what}; default {default_text(f)})" + (f" — {f.description}" if f.description else "")
        )
    head = f"**{op_cls.name}** — {getattr(op_cls, 'description', '')}"
    return head + ("\n\n" + "\n".join(rows) if rows else "\n\n(no parameters)")


def _input(f: FormField, value: Any) -> str:
    name = esc(f.name, quote=True)
    common = f'name="{name}" id="pf-{name}" data-kind="{f.kind}"'
    if f.kind == "bool":
        return f'<input type="checkbox" {common}{" checked" if value else ""}>'
    if f.kind == "tristate":
        opts = [("", "any"), ("true", "yes"), ("false", "no")]
        cur = "" if value is None else ("true" if value else "false")
        return (
            f"<select {common}>"
            + "".join(f'<option value="{v}"{" selected" if v == cur else ""}>{t}</option>' for v, t in opts)
            + "</select>"
        )
    if f.kind in ("int", "float"):
        attrs = f' step="{1 if f.kind == "int" else "any"}"'
        attrs += f' min="{f.minimum:g}"' if f.minimum is not None else ""
        attrs += f' max="{f.maximum:g}"' if f.maximum is not None else ""
        shown = "" if value is None else esc(str(value), quote=True)
        return f'<input type="number" {common}{attrs} value="{shown}" placeholder="{esc(default_text(f))}">'
    if f.kind == "choice":
        options = ([""] if f.optional else []) + list(f.choices)
        cur = "" if value is None else str(value)
        return (
            f"<select {common}>"
            + "".join(
                f'<option value="{esc(c, quote=True)}"{" selected" if c == cur else ""}>{esc(c) or "(none)"}</option>'
                for c in options
            )
            + "</select>"
        )
    if f.kind == "choices":
        chosen = {str(v) for v in value or []}
        return (
            f'<span class="pf-choices" {common}>'
            + "".join(
                f'<label><input type="checkbox" value="{esc(c, quote=True)}"'
                f"{' checked' if c in chosen else ''}> {esc(c)}</label>"
                for c in f.choices
            )
            + "</span>"
        )
    if f.kind == "words":
        text = ", ".join(str(v) for v in value or [])
        return f'<input type="text" {common} value="{esc(text, quote=True)}" placeholder="comma-separated">'
    if f.kind == "text":
        return f'<input type="text" {common} value="{esc(str(value or ""), quote=True)}">'
    text = "" if value is None else json.dumps(value, ensure_ascii=False)
    return f'<textarea {common} rows="2" placeholder="JSON">{esc(text)}</textarea>'


def form_html(node: Any, op_cls: Any) -> str:
    """The form for ``node`` (a ``workflows.model.Node``) of operator ``op_cls``."""
    fields = fields_of(op_cls.Params)
    if not fields:
        return f'<div class="pilot-form"><p class="pilot-empty">{esc(op_cls.name)} has no parameters.</p></div>'
    rows = []
    for f in fields:
        value = node.params.get(f.name, f.default)
        set_mark = ' class="pf-set"' if f.name in node.params else ""
        rows.append(
            f'<tr{set_mark}><th><label for="pf-{esc(f.name, quote=True)}">{esc(f.name)}</label></th>'
            f"<td>{_input(f, value)}</td>"
            f'<td class="pf-help">{esc(f.description)}{" · " if f.description else ""}'
            f"default: {esc(default_text(f))}</td></tr>"
        )
    return (
        f'<form class="pilot-form" data-node="{esc(node.id, quote=True)}">'
        f"<table>{''.join(rows)}</table>"
        '<button type="submit" class="pf-apply">Apply &amp; re-run</button>'
        "</form>"
    )


# Collects the form's values by kind and sends them with the node id (see ``read_form``).
FORM_JS = """
element.addEventListener('submit', (e) => {
  const form = e.target.closest('form.pilot-form');
  if (!form) return;
  e.preventDefault();
  const values = {};
  form.querySelectorAll('[data-kind]').forEach((el) => {
    const kind = el.dataset.kind, name = el.getAttribute('name');
    if (kind === 'bool') values[name] = el.checked;
    else if (kind === 'choices') values[name] = [...el.querySelectorAll('input:checked')].map((c) => c.value);
    else values[name] = el.value;
  });
  trigger('submit', {node: form.dataset.node, values: values});
});
"""


def _convert(f: FormField, raw: Any) -> Any:
    if f.kind == "bool":
        return bool(raw) if not isinstance(raw, str) else raw.lower() in ("true", "on", "1", "yes")
    if f.kind == "choices":
        return [str(v) for v in raw] if isinstance(raw, list) else [v.strip() for v in str(raw).split(",") if v.strip()]
    text = "" if raw is None else str(raw).strip()
    if f.kind == "tristate":
        return None if text == "" else text.lower() in ("true", "yes", "1")
    if text == "" and f.kind in ("int", "float", "choice", "json", "text"):
        return None if (f.optional or f.kind == "json") else ("" if f.kind == "text" else f.default)
    if f.kind == "int":
        try:
            return int(text)
        except ValueError:
            raise FormError(f"{f.name}: {text!r} is not a whole number") from None
    if f.kind == "float":
        try:
            return float(text)
        except ValueError:
            raise FormError(f"{f.name}: {text!r} is not a number") from None
    if f.kind == "words":
        return [w.strip() for w in text.split(",") if w.strip()]
    if f.kind == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormError(f"{f.name}: not valid JSON ({exc.msg})") from None
    return text


def read_form(op_cls: Any, current: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """The node's new params from the submitted ``values``. A field keeps being set when it was set
    before or now differs from its default; one cleared back to empty is dropped."""
    if not isinstance(values, dict):
        raise FormError("the form sent no values")
    problems: list[str] = []
    new: dict[str, Any] = {k: v for k, v in current.items() if k not in op_cls.Params.model_fields}
    for f in fields_of(op_cls.Params):
        if f.name not in values:
            if f.name in current:
                new[f.name] = current[f.name]
            continue
        try:
            value = _convert(f, values[f.name])
        except FormError as exc:
            problems.append(str(exc))
            continue
        if value is None and f.default is None and not f.required:
            continue  # cleared: back to the default
        if value == f.default and f.name not in current:
            continue
        if value in ([], {}) and f.default == value:
            continue
        new[f.name] = value
    if problems:
        raise FormError("; ".join(problems))
    try:
        op_cls.Params.model_validate(new)
    except ValidationError as exc:
        raise FormError(
            "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors())
        ) from None
    return new
