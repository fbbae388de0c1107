"""Coverage-guided fuzzing of one target with atheris: ``python -m fuzz.run NAME [options]``.

Arguments after the target name go to libFuzzer; without a corpus directory
the target's own (``fuzz/corpus/NAME``) is used, with the dictionary of its
kind of input from ``fuzz/dicts/``. See fuzz/README.md.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import atheris

HERE = Path(__file__).resolve().parent

# Comparisons inside str.startswith/endswith guide the fuzzer too. (Atheris's regex hook
# cannot be used: its pattern proxy drops match()'s position argument.)
atheris.enabled_hooks.add("str")
with atheris.instrument_imports(include=["sitemap_middleware", "fuzz"]):
    from fuzz.targets import TARGETS


DICTIONARIES = {
    "http_date": "http",
    "entity_tags": "http",
    "preconditions": "http",
    "accept_encoding": "http",
    "routing": "paths",
    "urls": "paths",
    "core": "paths",
    "lastmod": "lastmod",
}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: python -m fuzz.run {{{','.join(TARGETS)}}} [libFuzzer options] [dirs]")
    name, options = sys.argv[1], sys.argv[2:]
    if not any(not option.startswith("-") for option in options):
        options.append(str(HERE / "corpus" / name))
    dictionary = HERE / "dicts" / f"{DICTIONARIES[name]}.dict"
    if not any(option.startswith("-dict=") for option in options):
        options.insert(0, f"-dict={dictionary}")
    # libFuzzer runs argv[0] again (merge, fork): make it the whole command, target included.
    command = shlex.join([sys.executable, "-m", "fuzz.run", name])
    atheris.Setup([command, *options], TARGETS[name])
    atheris.Fuzz()


if __name__ == "__main__":
    main()
