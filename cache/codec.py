"""The one serialisation every cache backend uses: JSON with a few tagged types, never pickle.

Whoever can write to a cache directory (or a shared Redis) must not be able to run code in pilot by
planting an entry, so a cached value is decoded as data only: JSON (NaN allowed) for plain values,
pydantic models rebuilt by validation from their JSON form — only classes registered with
``register_models`` (anything else decodes as a miss, never as an import) — and numpy arrays as raw
bytes of a numeric dtype.

    blob = dumps((papers, ["a note"], "fp"))      # bytes
    value = loads(blob)                           # raises DecodeError for anything foreign

Tags are one-key objects whose key starts with ``$``; a plain dict that could be mistaken for a tag is
stored as a list of pairs, so every value round-trips exactly.
"""

from __future__ import annotations

import base64
import json
from functools import lru_cache
from typing import Any

import numpy as np
from pydantic import BaseModel, TypeAdapter

_MODELS: dict[str, type[BaseModel]] = {}
# dtypes an array may have: numbers and booleans only (an object array is how pickle gets in)
_DTYPES = frozenset(("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                     "float16", "float32", "float64"))  # fmt: skip
MAX_ARRAY_BYTES = 256 * 1024 * 1024


class DecodeError(ValueError):
    """The bytes are not a value this codec wrote (a damaged, foreign or planted entry): treat as a miss."""


def model_name(cls: type[BaseModel]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register_models(*classes: type[BaseModel]) -> None:
    """Allow these pydantic models in cached values. Decoding never imports a class by name: a model that
    was not registered in this process is not rebuilt."""
    for cls in classes:
        _MODELS[model_name(cls)] = cls


@lru_cache(maxsize=64)
def _list_adapter(cls: type[BaseModel]) -> TypeAdapter:
    return TypeAdapter(list[cls])  # type: ignore[valid-type]


def _is_tag_like(d: dict) -> bool:
    return any(not isinstance(k, str) or k.startswith("$") for k in d)


def _enc(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, BaseModel):
        cls = type(value)
        register_models(cls)  # a model this process made is trusted; the registry only guards decoding
        return {"$m": model_name(cls), "v": value.model_dump(mode="python")}
    if isinstance(value, list):
        if value and isinstance(value[0], BaseModel) and all(type(v) is type(value[0]) for v in value):
            cls = type(value[0])
            register_models(cls)
            return {"$ml": model_name(cls), "v": _list_adapter(cls).dump_python(value, mode="python")}
        return [_enc(v) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [_enc(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {"$set": [_enc(v) for v in value]}
    if isinstance(value, dict):
        if _is_tag_like(value):
            return {"$dict": [[_enc(k), _enc(v)] for k, v in value.items()]}
        return {k: _enc(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        if value.dtype.name not in _DTYPES:
            raise TypeError(f"cannot cache an array of dtype {value.dtype}")
        data = np.ascontiguousarray(value)
        return {"$nd": [data.dtype.name, list(data.shape), base64.b64encode(data.tobytes()).decode("ascii")]}
    if isinstance(value, np.generic):
        return _enc(value.item())
    raise TypeError(f"cannot cache a value of type {type(value).__name__}")


def dumps(value: Any) -> bytes:
    """``value`` as bytes; ``TypeError`` for anything that is not plain data, a pydantic model or an array."""
    return json.dumps(_enc(value), ensure_ascii=False, separators=(",", ":"), allow_nan=True).encode("utf-8")


def _model(name: Any) -> type[BaseModel]:
    cls = _MODELS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise DecodeError(f"unknown model {str(name)[:80]!r} in a cached value")
    return cls


def _array(spec: Any) -> np.ndarray:
    if not (isinstance(spec, list) and len(spec) == 3):
        raise DecodeError("malformed array in a cached value")
    dtype, shape, data = spec
    if dtype not in _DTYPES or not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise DecodeError("malformed array in a cached value")
    raw = base64.b64decode(data, validate=True) if isinstance(data, str) else b""
    size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    if size != len(raw) or size > MAX_ARRAY_BYTES:
        raise DecodeError("array data does not match its shape")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def _dec(value: Any) -> Any:
    if isinstance(value, list):
        return [_dec(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1 or (len(value) == 2 and "v" in value):
        if "$m" in value:
            return _model(value["$m"]).model_validate(value.get("v"))
        if "$ml" in value:
            return _list_adapter(_model(value["$ml"])).validate_python(value.get("v"))
        if "$tuple" in value:
            return tuple(_dec(v) for v in value["$tuple"])
        if "$set" in value:
            return {_dec(v) for v in value["$set"]}
        if "$dict" in value:
            return {_dec(k): _dec(v) for k, v in value["$dict"]}
        if "$nd" in value:
            return _array(value["$nd"])
    if _is_tag_like(value):
        raise DecodeError("unknown tag in a cached value")
    return {k: _dec(v) for k, v in value.items()}


def loads(blob: bytes | str) -> Any:
    """The value ``dumps`` wrote; ``DecodeError`` for anything else (never executes or imports anything)."""
    try:
        return _dec(json.loads(blob))
    except DecodeError:
        raise
    except (ValueError, TypeError, KeyError, RecursionError) as exc:  # includes pydantic's ValidationError
        raise DecodeError(f"not a cached value ({type(exc).__name__})") from None
