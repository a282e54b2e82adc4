"""A traceback ended by Ctrl-C (KeyboardInterrupt) is the stack of a hung program, not a crash (parse/
interrupted_traceback.py).

No seen case of the corpus pastes one, so the fixtures are real: CPython 3.11 programs that hang (tests/unit/
fixtures/paste/programs/ctrl_c_*.py) interrupted with SIGINT, their stderr as printed (3.11's `^^^^` marks kept).
"""

from __future__ import annotations

from pathlib import Path

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.interrupted_traceback import interrupted_stacks
from triage_tui.parse.paste_evidence import evidence_from_paste

from tests.unit.paste_diagnosis import ranked

FIX = Path(__file__).parent / "fixtures" / "paste"
LOCK = (FIX / "ctrl_c_traceback_lock.txt").read_text()
QUEUE = (FIX / "ctrl_c_traceback_queue_get.txt").read_text()


def _causes(text: str) -> list[str]:
    return ranked(diagnose_text(text).diagnosis, words=False)  # what the readers and rows rank, the word model apart


def test_the_frames_innermost_first_with_their_source_lines_and_no_carets() -> None:
    (proc,) = interrupted_stacks(QUEUE)
    frames = proc.threads[0].frames
    assert [f.function for f in frames] == ["wait", "get", "collect", "<module>"]
    assert frames[0].code == "waiter.acquire()" and frames[2].code == "return results.get()"
    assert proc.pid == 1 and proc.source == "traceback"


def test_an_interrupted_wait_reads_as_that_wait_and_never_as_a_crash() -> None:
    assert _causes(QUEUE)[:1] == ["event-never-fires"]  # a queue nobody puts to
    assert _causes(LOCK)[:1] == ["deadlock"]  # `with lock:` that another thread holds
    for text in (LOCK, QUEUE):
        d = diagnose_text(text).diagnosis
        assert "crashed-worker" not in _causes(text) and "log-traceback" not in {o.id for o in d.observations}
    part = evidence_from_paste(QUEUE).parts[0]
    assert part.used and "Ctrl-C" in part.used_as


def test_each_interrupted_traceback_is_one_process_and_a_failure_is_not_one() -> None:
    assert [p.pid for p in interrupted_stacks(LOCK + QUEUE)] == [1, 2]
    assert [p.pid for p in evidence_from_paste(LOCK + "\n" + QUEUE).stacks] == [1, 2]
    assert interrupted_stacks("Process 4242 (worker):\n" + LOCK)[0].pid == 4242
    failure = LOCK.replace("KeyboardInterrupt", "RuntimeError: boom")
    assert interrupted_stacks(failure) == ()
    assert "crashed-worker" in _causes(failure)


def test_a_failure_beside_the_interrupt_is_still_read_as_one() -> None:
    # the interrupt, then the clean-up's own error about a worker that died (the DataLoader's wording)
    text = LOCK + ("\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call "
                   "last):\n  File \"train.py\", line 20, in <module>\n    main()\nRuntimeError: DataLoader worker (pid 4242) "
                   "exited unexpectedly with exit code 1\n")
    ev = evidence_from_paste(text)
    assert ev.stacks and "failure" in ev.parts[0].used_as and "log-worker-exited" in ev.parts[0].used_as
    assert "crashed-worker" in _causes(text)


def test_a_traceback_the_terminal_began_with_ctrl_c_is_interrupted_even_when_the_paste_cuts_its_end() -> None:
    # huggingface/huggingface_hub#2543 (a seen case), as posted: `^C` echoed before the traceback, its end cut
    hub = """still waiting to acquire lock on /home/austin/.cache/huggingface/hub/.locks/models--NousResearch--Meta-Llama-3.1-8B-Instruct/fc1cdddd6bfa91128d6e94ee73d0ce62bfcdb7af29e978ddcab30c66ae9ea7fa.lock
^CTraceback (most recent call last):
  File "/home/austin/disk1/aphrodite-engine/conda/envs/aphrodite-runtime/bin/huggingface-cli", line 8, in <module>
    sys.exit(main())
[...]"""
    (proc,) = interrupted_stacks(hub)
    assert proc.threads[0].frames[0].code == "sys.exit(main())"
    ev = evidence_from_paste(hub)
    assert [p.kind for p in ev.parts][:2] == ["log", "traceback"] and "Ctrl-C" in ev.parts[1].used_as
    assert _causes(hub)[:1] == ["stale-file-lock"]
    # a `^C` traceback that ends in another exception is that exception's failure, read as one too
    assert interrupted_stacks(hub.replace("[...]", "OSError: [Errno 37] No locks available"))
