"""The twenty-first pass (issue 15): prose that names a mechanism by its fixed technical term
(parse/prose_mechanisms.py). Each term is tested on sentences quoted from public threads outside the corpus (the
address in a comment), each ranking the cause the term means, and on negatives that must not read it: a question, a
hedge or a supposition, a denial, the term in another sense."""

from __future__ import annotations

import re

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.diagnose.vocabulary import VOCABULARY
from triage_tui.parse.prose_lexicon import PROSE
from triage_tui.parse.prose_mechanisms import MECHANISMS, ROWS

from tests.unit.corpus_sources import seen_sources


def _ids(text: str) -> set[str]:
    return {o.id for o in diagnose_text(text).diagnosis.observations}


def _causes(text: str) -> list[str]:
    d = diagnose_text(text).diagnosis
    return [h.id for h in d.hypotheses if h.kind == "cause" and h.status != "ruled out" and h.score > 0]


def _first(text: str) -> str:
    causes = _causes(text)
    return causes[0] if causes else ""


def test_every_row_is_read_registered_and_sourced_outside_the_corpus() -> None:
    assert len(MECHANISMS) == len(ROWS) and all(s in PROSE for s in MECHANISMS)
    corpus = seen_sources()  # the seen sets' own addresses: a row's source is never a corpus case
    for oid, term, needles, _pattern, source in ROWS:
        assert needles and all(n == n.lower() for n in needles), oid
        assert oid.startswith("told-") and term and oid in VOCABULARY, oid
        addresses = [a.rstrip(");,/") for a in re.findall(r"https?://[^\s;]+", source)]
        assert addresses and not set(addresses) & corpus, (oid, source)


def test_quickedit_mode_is_a_held_process() -> None:
    # https://github.com/ja2-stracciatella/ja2-stracciatella/pull/1166
    text = ('The Windows console has a feature called "quick edit mode". When activated, it freezes the STDIO and '
            'pauses program execution., when user click anywhere on the console.')
    assert "told-quickedit" in _ids(text) and _first(text) == "stopped"
    # https://github.com/vercel/hyper/issues/3552
    text = 'Powershell and Cmd have a feature called "quickedit" that pauses writes to stdout.'
    assert _first(text) == "stopped"
    # https://github.com/HawaiiBeach/TinyNvidiaUpdateChecker/pull/44
    text = ("implemented function to disable QuickEdit (selecting text) in console. Solves the problem of a freezed "
            "progressbar when clicking the window.")
    assert _first(text) == "stopped"


def test_a_lock_of_any_name_a_killed_run_left_behind_is_a_stale_lock() -> None:
    for text in (
            # https://github.com/warewulf/warewulf3/pull/208
            "The wwupdatefiles cronjob leaves a lockfile behind if it is killed for whatever reason, preventing it from "
            "ever running again.",
            # https://github.com/ccztux/glsysbackup/issues/51
            "In some error cases, when glsysbackup breaks, the lockfile is left over and glsysbackup can not start the "
            "next time."):
        assert "told-stale-pidfile" in _ids(text) and _first(text) == "stale-file-lock", text
    for text in ("How would we distinguish a legitimate lock from one left behind from a killed job?",
                 "the dying thread left behind a lock held in the child"):
        assert "told-stale-pidfile" not in _ids(text), text


def test_a_background_job_stopped_by_its_terminal_is_a_stopped_process() -> None:
    # https://github.com/nodejs/node/issues/20148 (the reporter, then the maintainer)
    text = ("When you run this script detachted: `./script.js &` and send any input to stdin (for example just press "
            "enter), `fs` stops watching. You get the message: `Job 1, './script.js &' has stopped` printed on the "
            "terminal but the actual proces is still running.")
    assert "told-tty-stop" in _ids(text) and _first(text) == "stopped"
    text = ("When you put the node process in the background and then feed its stdin, it gets sent a `SIGTTIN` signal "
            "that pauses it.  When you `fg` it again, the shell sends it a `SIGCONT` that unpauses it.")
    assert _first(text) == "stopped"
    # the shells' job lines (bash's manual, Job Control Basics; zsh)
    for line in ("[1]+  Stopped (tty input)        ./si", "[1]  + suspended (tty output)  ./si",
                 "[2]+  Stopped                 python3 serve.py &"):
        assert "told-tty-stop" in _ids(line), line


def test_a_background_job_that_does_not_stop_or_whose_output_stops_is_not_read() -> None:
    for text in ("It is not stopped when run in the background.", "Is it stopped when run in the background?",
                 "the training runs in the background and the loss stops decreasing after epoch 3",
                 "I run the server in the background and it works fine."):
        assert "told-tty-stop" not in _ids(text), text


def test_quickedit_asked_hedged_or_in_wordpress_is_not_read() -> None:
    assert "told-quickedit" not in _ids("Could it be QuickEdit mode in the console?")
    assert "told-quickedit" not in _ids("It is not QuickEdit mode, I disabled it in the console properties.")
    # https://github.com/ytdl-org/youtube-dl/issues/28826 (the answer supposes)
    assert "told-quickedit" not in _ids("I could be wrong but I think this is the effect of QuickEdit mode, which you "
                                        "can turn off in the properties of the command window.")
    # https://github.com/hlashbrooke/WordPress-Plugin-Template/issues/62 (WordPress' Quick Edit of a post)
    wordpress = ('However, when I click "Quick Edit", then click "Update", my custom meta values for the post are '
                 'deleted.')
    assert "told-quickedit" not in _ids(wordpress)


def test_a_zombie_is_a_worker_that_exited() -> None:
    # https://github.com/Subsentient/epoch/issues/3
    text = ("During a REAL bootup, and only during a real bootup (e.g. PID 1), all daemons Epoch launches itself "
            "become zombies.")
    assert "told-zombie" in _ids(text) and _first(text) == "crashed-worker"
    # https://github.com/genodelabs/genode/issues/271 (its "until core is killed" is read as a kill too: the kill row's)
    assert "told-zombie" in _ids("Genode children stay in zombie state until core is killed under Linux.")
    assert "told-zombie" not in _ids("Are there any zombie processes left?")
    assert "told-zombie" not in _ids("ps shows no zombie processes and no process in D state.")


def test_cfs_throttling_is_a_starved_cpu() -> None:
    # https://github.com/kubernetes/kubernetes/issues/67577 (title)
    text = "CFS quotas can lead to unnecessary throttling"
    assert "told-word-cpu-limit" in _ids(text) and _first(text) == "cpu-starved"
    # https://github.com/aurae-runtime/aurae/issues/407
    assert _first("In short, CFS CPU throttling works by:") == "cpu-starved"


def test_memory_thrashing_is_memory_pressure() -> None:
    # https://github.com/avalonmediasystem/avalon/issues/1346 (title)
    text = "We are Forcing Chris C onto Swap Space Too Often and he's thrashing"
    assert "told-word-oom" in _ids(text) and _first(text) == "oom"
    assert "told-word-oom" not in _ids("Is the machine thrashing its swap?")


def test_fork_in_a_multithreaded_process_is_an_inherited_lock() -> None:
    # https://github.com/DynamoRIO/dynamorio/issues/239
    text = ("when a multi-threaded process forks, the fork child is alone in its new process but other threads could "
            "have held locks at the fork point.")
    assert "told-fork-threads" in _ids(text) and _first(text) == "fork-inherited-lock"
    # https://github.com/Kistler-Group/sdbus-cpp/issues/296 (POSIX's rule, quoted as a supposition: "If ...")
    assert "told-fork-threads" not in _ids("If a multi-threaded process calls fork(), the new process shall contain a "
                                           "replica of the calling thread and its entire address space.")


def test_an_app_loaded_before_the_workers_fork_is_an_inherited_lock() -> None:
    # https://github.com/rackerlabs/understack/pull/1918
    text = ("lazy-apps=true was originally added to work around a bug where connections opened during app init (e.g. "
            "memcache sockets) were shared between uWSGI workers after forking")
    assert "told-fork-preload" in _ids(text) and _first(text) == "fork-inherited-lock"
    # https://github.com/elastic/apm-agent-python/issues/2304
    assert _first("Adding lazy-apps fixes the issue so we should investigate this") == "fork-inherited-lock"
    # https://github.com/alphagov/notifications-api/pull/2829
    assert "told-fork-preload" in _ids("preload_app is a flag that makes the gunicorn master process load the app "
                                       "code, and then copy that code to each worker.")


def test_the_gil_held_while_blocking_is_a_deadlock() -> None:
    # https://github.com/rapidsai/rapidsmpf/pull/188
    text = ("Otherwise, the thread could block while still holding the GIL, potentially leading to a deadlock.")
    assert "told-gil-held" in _ids(text) and _first(text) == "deadlock"
    # https://github.com/earth-mover/icechunk/pull/563
    assert "told-gil-held" in _ids("Thread B calls `block_on` waiting on a Read lock on the store. Notably it blocks "
                                   "without releasing the Gil")
    # https://github.com/GafferHQ/gaffer/pull/2765
    assert "told-gil-held" in _ids("Without the release we could get deadlocks while the calling thread waited for "
                                   "background tasks to cancel and background tasks waited for the GIL.")
    assert "told-gil-held" not in _ids("Maybe a thread holds the GIL while it waits?")
    assert "told-gil-held" not in _ids("The GIL limits how fast the threads run on many cores.")


def test_leaked_semaphores_are_a_process_that_died() -> None:
    # https://github.com/SkyworkAI/SkyReels-V1/issues/43
    text = ("anaconda3/envs/SkyReels/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: "
            "resource_tracker: There appear to be 1 leaked semaphore objects to clean up at shutdown\n"
            "  warnings.warn('resource_tracker: There appear to be %d '\n")
    assert "told-leaked-semaphore" in _ids(text) and _first(text) == "crashed-worker"
    # https://github.com/amazon-science/mm-cot/issues/25: the kill beside it names the death (the OOM killer)
    text = ("[1]    75076 killed     python main.py --model allenai/unifiedqa-t5-base --user_msg rationale  detr\n"
            "resource_tracker.py:216: UserWarning: resource_tracker: There appear to be 1 leaked semaphore objects to "
            "clean up at shutdown\n")
    assert "told-leaked-semaphore" in _ids(text) and _first(text) == "oom"


def test_an_uncorrectable_ecc_error_is_a_lost_gpu() -> None:
    # https://github.com/vllm-project/vllm/issues/5222 (title)
    text = "[Usage]: RuntimeError: CUDA error: uncorrectable ECC error encountered"
    assert "told-gpu-ecc" in _ids(text) and _first(text) == "gpu-lost"
    # https://github.com/jcjohnson/neural-style/issues/312
    neural_style = "When I run the code, I get an \u201cuncorrectable ECC error encountered\u201d after 600 iteration."
    assert _first(neural_style) == "gpu-lost"
    # https://github.com/NVIDIA/k8s-device-plugin/issues/243: nvidia-smi's column header is no error
    header = "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
    assert "told-gpu-ecc" not in _ids(header)
    assert "told-gpu-ecc" not in _ids("nvidia-smi -q shows no uncorrectable ECC errors on any GPU.")


def test_tdr_is_a_gpu_that_hung() -> None:
    # https://github.com/rogerallen/raytracinginoneweekendincuda/issues/7
    text = ("Are you on Windows or Linux?  I'm going to guess Windows.  It seems like you are hitting TDR timeout and "
            "you'll need to set a higher timeout.")
    assert "told-gpu-tdr" in _ids(text) and _first(text) == "gpu-hang"
    # https://github.com/ALaggyDev/CoordsFinder/issues/14 (title)
    assert "told-gpu-tdr" in _ids("GPU TDR occurs during wgpu compute workload")
    # time-domain reflectometry, a cable test: the acronym in another sense
    assert "told-gpu-tdr" not in _ids("The switch's TDR cable test reports an open pair at 12 m.")


def test_the_cgroup_freezer_is_a_held_process() -> None:
    # https://github.com/opencontainers/runc/issues/2105 (title)
    text = "runC can't kill containers containing cgroup-freezer frozen processes"
    assert "told-cgroup-freezer" in _ids(text) and _first(text) == "stopped"
    # https://github.com/lxc/lxc/issues/3578 (advice that supposes)
    assert "told-cgroup-freezer" not in _ids("If you must use this kernel, it looks like you should avoid using the "
                                             "freezer cgroup.")


def test_a_stale_pidfile_and_a_wait_in_flock_are_a_lock_file() -> None:
    # https://github.com/mheily/jobd/issues/44
    text = ("I noticed when switching between Lumina and Fluxbox that launchd would leave a stale pidfile behind. This "
            "would break the ability to start daemon again.")
    assert "told-stale-pidfile" in _ids(text) and _first(text) == "stale-file-lock"
    # https://github.com/linux-on-mac/mbpfan/issues/52
    assert "told-stale-pidfile" in _ids("It there is a pid file but the daemon does not run (stale pid file), the "
                                        "program stops with")
    # https://github.com/d2iq-archive/marathon-lb/issues/267
    text = "Looks like lock isn't released and we've some hanging calls to flock:"
    assert "told-flock-wait" in _ids(text) and _first(text) == "stale-file-lock"
    assert "told-flock-wait" not in _ids("Is the process blocked in flock?")


def test_a_service_that_never_becomes_available_is_a_result_that_never_comes() -> None:
    # https://github.com/eProsima/Fast-DDS/issues/2314
    text = "When service and client are created in the same time, the wait_for_service will hang indefinably."
    assert "told-never-available" in _ids(text) and _first(text) == "event-never-fires"
    assert "told-never-available" not in _ids("Did the service never become available, or did the call fail?")
