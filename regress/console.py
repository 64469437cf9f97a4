"""The entry points of the installed commands (pyproject.toml, setup.py):
`parbench-compare` calls regress.console.regress__compare, which runs
`python -m regress.compare` in this process, as the ci/ wrapper does, so the
tool's own main (and cli.run_tool's one-line errors and exit codes) serve
both. The attribute names the module, dots written as "__"."""
import importlib.util
import runpy


def __getattr__(name):
    module = name.replace("__", ".")
    if not module.startswith(("regress.", "plots.")) or importlib.util.find_spec(module) is None:
        raise AttributeError(name)

    def launch():
        runpy.run_module(module, run_name="__main__", alter_sys=True)

    return launch
