"""torch's op table called by keyword: every argument of torch's samples given by its name.

    python tests/fuzz/keyword_scan.py [--only add,linalg.solve] [--samples 3] [--aliases]

For each OpInfo sample (function and method forms) the positionals are named after torch's
schema (``self`` is ``input`` in a function) or its Python signature; a call torch 2.13
accepts by keyword runs in gradkit with the same keywords and the results are compared.
``--aliases`` also renames them to the NumPy spellings torch's parser takes (``x=``,
``axis=``, ``keepdims=``, ``x2=``) and compares whatever torch accepts. Exits 1 on a
difference.
"""
from __future__ import annotations

import argparse
import inspect
import sys
import types
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.opinfo_samples import (  # noqa: E402
    fresh_leaves, gradkit_callable, run_both, to_gradkit, torch)
from fuzz.opinfo_scan import _selected, guarded  # noqa: E402

ALIASES = {"input": "x", "other": "x2", "dim": "axis", "keepdim": "keepdims"}


def _aten_name(opinfo, method: bool) -> str:
    if method:
        return opinfo.name.split(".")[-1]
    name = opinfo.name.replace("nn.functional.", "").replace("special.", "special_")
    return name.replace("linalg.", "linalg_").replace("fft.", "fft_")


def signatures(opinfo, method: bool) -> list[list[str]]:
    """Each signature of the op as its positional parameter names (the tensor's own first
    for a method is left out)."""
    f = opinfo.method_variant if method else opinfo.op
    if getattr(f, "__module__", "").startswith("torch.testing"):  # the table's own lambda
        return []
    try:
        parameters = inspect.signature(f).parameters.values()
        if not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
            names = [p.name for p in parameters if p.kind != p.KEYWORD_ONLY]
            return [names[1:] if method else names]
    except (TypeError, ValueError):
        pass
    found = []
    for schema in torch._C._jit_get_schemas_for_operator("aten::" + _aten_name(opinfo, method)):
        names = [a.name for a in schema.arguments if not a.kwarg_only]
        if names and names[0] == "self" and "out" not in schema.overload_name:
            names = names[1:] if method else ["input"] + names[1:]
            if names not in found:
                found.append(names)
    return found


def keyword_forms(opinfo, method: bool, sample) -> list[dict]:
    """Each all-keyword form of ``sample`` that torch accepts (its value compared later)."""
    positionals = list(sample.args) if method else [sample.input, *sample.args]
    forms = []
    for names in signatures(opinfo, method):
        if len(positionals) > len(names) or any(n in sample.kwargs for n in names[
                :len(positionals)]):
            continue
        kwargs = dict(zip(names, positionals), **sample.kwargs)
        if kwargs not in forms and _torch_accepts(opinfo, method, sample, kwargs):
            forms.append(kwargs)
    return forms[:1]


def _call(f, method: bool, x, kwargs: dict):
    return getattr(x, f)(**kwargs) if method else f(**kwargs)


def _torch_accepts(opinfo, method: bool, sample, kwargs: dict) -> bool:
    f = opinfo.name.split(".")[-1] if method else opinfo.op
    x, kw = fresh_leaves(sample.input), fresh_leaves(kwargs)
    try:
        _call(f, method, x, kw)
    except TypeError:
        return False
    except Exception:  # noqa: BLE001 - a value error of torch's: the names were taken
        return True
    return True


def compare(opinfo, method: bool, sample, kwargs: dict) -> str | None:
    gradkit_f = gradkit_callable(opinfo, "method" if method else "op")
    if gradkit_f is None:
        return None
    name = opinfo.name.split(".")[-1]
    x, kw = fresh_leaves(sample.input), fresh_leaves(kwargs)
    gx, gkw = to_gradkit(x, []), to_gradkit(kw, [])
    if not method:
        gradkit_f = getattr(gradkit_f, "func", gradkit_f)
    found, _, _ = run_both(lambda: _call(name if method else opinfo.op, method, x, kw),
                           lambda: _call(name if method else gradkit_f, method, gx, gkw))
    if found and found.startswith("out["):  # values: a difference of the positional call too?
        given = (list(sample.args) if method else [x, *sample.args]), dict(sample.kwargs)
        if run_both(lambda: _positional(opinfo, method, x, *given),
                    lambda: _positional(types.SimpleNamespace(op=gradkit_f, name=opinfo.name),
                                        method, gx, *to_gradkit(given, [])))[0]:
            return None  # (eigenvectors' signs: opinfo_scan's business, not the names')
    return found


def _positional(opinfo, method: bool, x, positional: list, kwargs: dict):
    if method:
        return getattr(x, opinfo.name.split(".")[-1])(*positional, **kwargs)
    return opinfo.op(*positional, **kwargs)


def scan(only: set, samples: int, aliases: bool) -> int:
    differing = total = 0
    for opinfo in _selected(only):
        dtypes = sorted(opinfo.dtypes, key=str)
        dtype = torch.float64 if torch.float64 in dtypes else dtypes[0] if dtypes else None
        try:
            drawn = list(opinfo.sample_inputs("cpu", dtype))[:samples]
        except Exception:  # noqa: BLE001 - torch's sampler needs what it has not
            continue
        seen = set()
        for method in (False, True):
            if (opinfo.method_variant if method else opinfo.op) is None:
                continue
            for sample in drawn:
                for kwargs in keyword_forms(opinfo, method, sample):
                    tries = [kwargs] + ([{ALIASES.get(k, k): v for k, v in kwargs.items()}]
                                        if aliases and set(kwargs) & set(ALIASES) else [])
                    for kw in tries:
                        total += 1
                        found = guarded(lambda k=kw, s=sample, o=opinfo, m=method:
                                        compare(o, m, s, k))
                        key = (method, tuple(kw), found and found[:40])
                        if found and key not in seen:
                            seen.add(key)
                            differing += 1
                            print(f"{opinfo.name}{'.method' if method else ''}"
                                  f"({', '.join(kw)}): {found}"[:300], flush=True)
    print(f"{total} keyword calls, {differing} differing", flush=True)
    return differing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--aliases", action="store_true")
    arguments = parser.parse_args()
    warnings.simplefilter("ignore")
    only = set(filter(None, arguments.only.split(",")))
    return 1 if scan(only, arguments.samples, arguments.aliases) else 0


if __name__ == "__main__":
    sys.exit(main())
