"""Where the app's start goes: CPU and wall time from exec to each phase, in a real terminal (tmux, 200x50).

triage runs on the demo's incident (started beforehand) as `triage PID --log LOG --port N --interval 1`, under
a wrapper that marks, with the process's CPU (`time.process_time`, every thread) and the wall clock against a
timestamp taken just before exec: Python up (site done), the early frame written (commands/early_frame.py),
`ui.app` imported (textual and rich with it), the app mounted, textual's first frame written to the
terminal (the first `App._display` with something in it), the real panes mounted, the first Moment shown
(render_all with it), and the first Moment's paint. The wrapper exits the app then. Bytecode caches warm (a
round first, not counted); each tree interleaved with the others; the median and range of n.

    python3 bench/start_phases.py                       # BENCH_REPEATS=6
    BENCH_BEFORE=/path/to/older/checkout python3 bench/start_phases.py
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from contextlib import closing

from common import REPO, TmuxPane, load_line

sys.path.insert(0, str(REPO))

from triage_tui.demo.incident import DemoIncident  # noqa: E402

WRAPPER = r'''
import os, sys, time
T = {"python up": (time.process_time(), time.time())}
def mark(k):
    T.setdefault(k, (time.process_time(), time.time()))
def dump():
    with open(os.environ["MARKS"], "w") as f:
        for k, (c, w) in T.items():
            f.write(f"{k}\t{c * 1000:.1f}\t{w:.4f}\n")
import atexit
atexit.register(dump)
sys.path.insert(0, os.getcwd())
sys.argv = ["triage"] + sys.argv[1:]
import importlib.abc, importlib.machinery

def patch_app(module):
    import textual.app
    mark("ui.app imported (textual, rich)")
    shown = textual.app.App._display
    def display(self, screen, renderable):
        shown(self, screen, renderable)
        if renderable is not None:
            mark("textual's first frame written")
            if "first Moment shown" in T:
                mark("the first Moment painted")
                self.exit()
    textual.app.App._display = display
    A = module.TriageApp
    on_mount = A.on_mount
    def mounted(self):
        mark("app mounted (compose, CSS)")
        on_mount(self)
    A.on_mount = mounted
    mount_panes = A._mount_panes
    async def panes(self):
        await mount_panes(self)
        mark("real panes mounted")
    A._mount_panes = panes
    render_all = A.render_all
    def render(self):
        render_all(self)
        if self.panes_ready and self.shown_moment() is not None:
            mark("first Moment shown")
    A.render_all = render

class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name not in ("triage_tui.ui.app", "triage_tui.commands.early_frame"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            if name == "triage_tui.ui.app":
                patch_app(module)
            else:
                frame = module.EarlyFrame.show
                def show(self, *a, **k):
                    frame(self, *a, **k)
                    mark("early frame written")
                module.EarlyFrame.show = show
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, Watch())
from triage_tui import cli
raise SystemExit(cli.main())
'''

PHASES = ("python up", "early frame written", "ui.app imported (textual, rich)", "app mounted (compose, CSS)",
          "textual's first frame written", "real panes mounted", "first Moment shown", "the first Moment painted")


def run(repeats: int) -> dict[str, dict[str, list[tuple[float, float]]]]:
    trees = [("after", str(REPO))] + [(f"before ({os.path.basename(d.rstrip('/'))})", d)
                                      for d in os.environ.get("BENCH_BEFORE", "").split(":") if d]
    out: dict[str, dict[str, list[tuple[float, float]]]] = {label: {} for label, _ in trees}
    # a session kept for the whole run: the benchmark's own tmux server stays up between starts (a server
    # exiting with its last session races the next start's new-session: "server exited unexpectedly")
    with closing(TmuxPane("keeper", "sleep 86400", socket=f"bench-phases-{os.getpid()}")), \
            DemoIncident(workers=8, weights_mb=16) as demo, tempfile.TemporaryDirectory(prefix="bench-phases-") as work:
        d = demo.info
        assert d is not None
        wrapper = os.path.join(work, "wrapper.py")
        with open(wrapper, "w") as f:
            f.write(WRAPPER)
        for i in range(repeats + 1):
            for k, (label, code) in enumerate(trees):
                marks, stamp = os.path.join(work, f"m-{i}-{k}"), os.path.join(work, f"s-{i}-{k}")
                command = (f"unset PYTHONDONTWRITEBYTECODE; cd {code} && date +%s.%N > {stamp}; MARKS={marks} exec "
                           f"{sys.executable} {wrapper} {d.launcher_pid} --log {d.log_path} --port {d.port} "
                           "--interval 1 --no-record --no-auto-stacks")
                pane = TmuxPane(f"bench-phases-{os.getpid()}-{i}-{k}", command, socket=f"bench-phases-{os.getpid()}")
                try:
                    start = time.time()
                    while not os.path.exists(marks) and time.time() - start < 60:
                        time.sleep(0.05)
                    time.sleep(0.1)
                finally:
                    pane.close()
                if i == 0:
                    continue
                with open(stamp) as f:
                    exec_at = float(f.read())
                with open(marks) as f:
                    for line in f:
                        name, cpu, wall = line.rstrip("\n").split("\t")
                        out[label].setdefault(name, []).append((float(cpu), (float(wall) - exec_at) * 1000))
            if i > 0:
                print(f"round {i}: {load_line()}", flush=True)
    return out


def table(out: dict[str, dict[str, list[tuple[float, float]]]]) -> str:
    labels = list(out)
    lines = ["| phase | " + " | ".join(f"{lab}: CPU ms | {lab}: wall ms from exec" for lab in labels) + " |",
             "|---|" + "---|---|" * len(labels)]
    for phase in PHASES:
        cells = []
        for lab in labels:
            got = out[lab].get(phase)
            if not got:
                cells += ["–", "–"]
                continue
            cpu, wall = [c for c, _ in got], [w for _, w in got]
            cells += [f"{statistics.median(cpu):.0f} ({min(cpu):.0f}–{max(cpu):.0f})",
                      f"{statistics.median(wall):.0f} ({min(wall):.0f}–{max(wall):.0f}, n={len(wall)})"]
        lines.append(f"| {phase} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print("before: " + load_line())
    print(table(run(int(os.environ.get("BENCH_REPEATS", "6")))))
    print("after: " + load_line())
