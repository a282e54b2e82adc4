"""Fuzz `triage diagnose`: hundreds of mutated real pastes plus random bytes and the hardening campaign's shapes
(long lines, runs of spaces, NUL, invalid UTF-8, a 50 MB paste, a 10 MB line, /dev/zero).

No traceback and no hang. The time bound is the harness's, not an assertion on speed: every input goes to a
child process that answers one line per input; the parent waits for that line at most PER_INPUT_S and a
missing answer fails the test naming the input (then the child is killed). The big shapes go through the real
command line, each in its own subprocess with a timeout.
"""

from __future__ import annotations

import os
import random
import select
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# cases-9 .. cases-30 were each scored once at a freeze (5f6c2bc, 57d6432, 68a249b, a2fd891, ff65146, 7b5bb7c,
# a1553e9, 71324c9, 96ce5e3, 0309a2c, e075cd5, 9a96208, 23becdb, 998fe2c for both cases-22 and cases-23, 290d778,
# 15341d1 for cases-25 .. cases-28, b4b249d for cases-29 and cases-30):
# a set gathered while a pass is written is named here until it is scored
HELD_OUT: frozenset[str] = frozenset({"cases-31", "cases-32"})
PER_INPUT_S = 60.0  # a hang, not slowness: the inputs here take well under a second each on an idle machine
SEEDS = sorted([*(ROOT / "tests" / "unit" / "fixtures" / "diagnose").glob("*.txt"),
                *(ROOT / "tests" / "unit" / "fixtures" / "paste").glob("*.txt"),
                # a held-out set gathered while a pass is written is left out here until it has been scored once
                # (a failure here must not show its text first): name it in HELD_OUT while it waits
                *(p for p in (ROOT / "tests" / "corpus").glob("*/*.md") if p.parent.name not in HELD_OUT)])
MUTATED_PER_SEED = 3
RANDOM_INPUTS = 40


def _mutate(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n") or [b""]
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(10)
        i = rng.randrange(len(lines))
        if op == 0:  # a long line without spaces
            lines[i] = lines[i] + b"x" * rng.choice((5_000, 40_000, 200_000))
        elif op == 1:  # a run of spaces inside a line
            cut = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:cut] + b" " * rng.choice((1_000, 40_000)) + lines[i][cut:]
        elif op == 2:  # NUL bytes
            lines[i] = lines[i].replace(b" ", b"\x00", rng.randint(1, 5)) + b"\x00"
        elif op == 3:  # invalid UTF-8
            lines[i] = lines[i] + bytes([0xFF, 0xFE, 0xC3, 0x28, 0xE2, 0x82])
        elif op == 4:  # a line repeated many times
            lines[i:i + 1] = [lines[i]] * rng.choice((200, 5_000))
        elif op == 5:  # cut in the middle
            lines = lines[: max(1, i)]
        elif op == 6:  # flipped bytes
            raw = bytearray(b"\n".join(lines))
            for _ in range(rng.randint(1, 30)):
                if raw:
                    raw[rng.randrange(len(raw))] = rng.randrange(256)
            lines = bytes(raw).split(b"\n")
        elif op == 7:  # chat and quote prefixes
            lines = [b"> " + ln if rng.random() < 0.5 else b"[10:32] alice: " + ln for ln in lines]
        elif op == 8:  # digits, brackets and colons: the characters the readers' patterns look for
            lines[i] = lines[i] + rng.choice((b"1", b"[", b":", b"%", b"/", b"(", b"0x")) * rng.choice((2_000, 30_000))
        else:  # lines shuffled
            rng.shuffle(lines)
    return b"\n".join(lines)


def _inputs(tmp: Path) -> list[Path]:
    rng = random.Random(15)
    out = []
    for seed in SEEDS:
        data = seed.read_bytes()
        for k in range(MUTATED_PER_SEED):
            path = tmp / f"{seed.stem}.{k}.txt"
            path.write_bytes(_mutate(data, rng))
            out.append(path)
    for k in range(RANDOM_INPUTS):
        path = tmp / f"random.{k}.bin"
        size = rng.choice((1, 100, 10_000, 300_000))
        if k % 2:  # random printable-ish text, which is not refused as binary and reaches every reader
            alphabet = b"abc xyz 0123456789 []():/%|#.-_=\t\n"
            path.write_bytes(bytes(rng.choice(alphabet) for _ in range(size)))
        else:
            path.write_bytes(rng.randbytes(size))
        out.append(path)
    return out


def _ask(child: subprocess.Popen, line: str) -> str:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(line + "\n")
    child.stdin.flush()
    ready, _, _ = select.select([child.stdout], [], [], PER_INPUT_S)
    if not ready:
        return "hang"
    return child.stdout.readline().strip() or "child died"


@pytest.mark.timeout(1800)  # the whole run; each input has its own bound (PER_INPUT_S) enforced above
def test_mutated_and_random_inputs_end_without_a_traceback(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path)
    assert len(inputs) >= 300, len(inputs)  # hundreds of mutated real inputs plus the random ones
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fuzz" / "diagnose_child.py")], cwd=ROOT, env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    bad = []
    try:
        for k, path in enumerate(inputs):
            reply = _ask(child, f"{path} {'json' if k % 3 == 0 else 'md'}")
            if not reply.startswith("ok "):
                bad.append(f"{path.name}: {reply}")
                if reply in ("hang", "child died"):
                    break
            elif reply not in ("ok 0", "ok 1", "ok 2"):
                bad.append(f"{path.name}: {reply}")
    finally:
        child.kill()
        child.wait()
    assert not bad, bad[:10]


def _cli(*args: str, stdin=None, input_bytes: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "triage_tui", "diagnose", *args], cwd=ROOT, stdin=stdin,
                          input=input_bytes, capture_output=True, timeout=PER_INPUT_S * 2)


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("diagnose-big")
    shapes = {
        "line_50mb.txt": lambda fh: fh.write(b"a" * (50 << 20)),
        "line_10mb_segfault.txt": lambda fh: fh.write(b"python3[123]: segfault" + b"x" * (10 << 20) + b"\n"),
        "spaces_10mb.txt": lambda fh: fh.write(b"  File " + b" " * (10 << 20) + b"x\n"),
        "lines_50mb.txt": lambda fh: [fh.write(b"[rank0]: NCCL WARN Timeout 12345 [12:00:01] loading 10/64 [\n")
                                      for _ in range(50 << 20 >> 6)],
    }
    out = {}
    for name, write in shapes.items():
        with open(tmp / name, "wb") as fh:
            write(fh)
        out[name] = tmp / name
    return out


@pytest.mark.parametrize("name", ["line_50mb.txt", "line_10mb_segfault.txt", "spaces_10mb.txt", "lines_50mb.txt"])
def test_big_inputs_end_with_a_cut_note(big: dict[str, Path], name: str) -> None:
    out = _cli("--format", "json", str(big[name]))
    assert b"Traceback" not in out.stderr, out.stderr[-2000:]
    assert out.returncode in (0, 1), out.stderr
    assert b"cut" in out.stdout  # what was cut is said


def test_dev_zero_ends_with_one_line() -> None:
    out = _cli("/dev/zero")
    assert out.returncode == 1 and out.stderr.count(b"\n") == 1 and b"binary" in out.stderr, out.stderr


def test_endless_stdin_of_text_ends() -> None:
    with open("/dev/zero", "rb") as zero:  # an endless stream: only the capped part is read
        out = _cli(stdin=zero)
    assert out.returncode == 1 and b"Traceback" not in out.stderr
