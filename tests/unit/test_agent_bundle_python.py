"""The agent bundle runs on a node's bare python3 3.8+: checked mechanically, with vermin and an AST pass.

The node runs the agent as `python3 -I -S` (standard library only): so every bundled module must parse and
run on 3.8, and import nothing outside the standard library and the bundle itself.
"""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import zipfile
from pathlib import Path

from triage_tui.host.ssh_agent_bundle import MIN_NODE_PYTHON, build_zip

# str methods vermin cannot see on an untyped receiver
_NEWER_METHODS = {"removeprefix": (3, 9), "removesuffix": (3, 9)}


def _extract(tmp_path: Path) -> list[Path]:
    zipfile.ZipFile(io.BytesIO(build_zip())).extractall(tmp_path)
    return sorted(tmp_path.rglob("*.py"))


def test_vermin_says_the_bundle_runs_on_the_oldest_node_python(tmp_path: Path) -> None:
    _extract(tmp_path)
    target = ".".join(map(str, MIN_NODE_PYTHON))
    done = subprocess.run([sys.executable, "-c", "import sys, vermin; sys.exit(vermin.main())", f"--target={target}-", "--no-tips", "--violations",
                           "--no-parse-comments", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_bundle_modules_use_nothing_newer_and_import_only_the_stdlib_and_themselves(tmp_path: Path) -> None:
    files = _extract(tmp_path)
    bundled = {".".join(p.relative_to(tmp_path).with_suffix("").parts).removesuffix(".__init__") for p in files}
    stdlib = set(sys.stdlib_module_names)
    problems = []
    for path in files:
        tree = ast.parse(path.read_text())
        annotated = any(isinstance(n, (ast.AnnAssign, ast.arg)) and n.annotation is not None
                        or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns is not None
                        for n in ast.walk(tree))
        future = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                     and any(a.name == "annotations" for a in n.names) for n in tree.body)
        if annotated and not future:  # 3.8 would evaluate `tuple[int, ...]` at definition time
            problems.append(f"{path.name}: annotations without `from __future__ import annotations`")
        # imports under `if TYPE_CHECKING:` never run (the type checker's names, e.g. typing_extensions.TypeIs)
        checker_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                        and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
                        for stmt in block.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in checker_only and isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Attribute) and node.attr in _NEWER_METHODS:
                problems.append(f"{path.name}:{node.lineno}: .{node.attr}() needs {_NEWER_METHODS[node.attr]}")
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in stdlib and name not in bundled and top not in bundled:
                    problems.append(f"{path.name}:{node.lineno}: imports {name}, which the node may not have")
    assert problems == []
