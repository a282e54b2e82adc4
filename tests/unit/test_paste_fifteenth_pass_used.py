"""The fifteenth pass's first step (issue 15): the seen files where triage read nothing now have a piece honestly
used — the symptom as the reporter tells it (`told-stall`: "seems stuck", "taking too long", "no output", "卡住") and
a pasted script read as code naming the library calls it makes (`pasted-code`). Both are shown and said in the parts'
accounting, and neither ranks a cause: every cause (and a healthy job that is only slow) looks stuck to someone, and a
call is where a job waits, not why. Fixtures are the seen cases' real text (tests/corpus/cases-9 .. cases-14).
"""

from __future__ import annotations

import pytest

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse import python_code
from triage_tui.parse.prose_lexicon import scan_told

from tests.unit.paste_diagnosis import is_word_model, ranked


def _causes(text: str) -> list[str]:
    return ranked(diagnose_text(text).diagnosis, words=False)  # what the readers and rows rank, the word model apart


def _ids(text: str) -> set[str]:
    return {o.id for o in diagnose_text(text).diagnosis.observations}


# the symptom told, from the seen files that read nothing before this pass (their source in the comment)
@pytest.mark.parametrize("line", [
    "It seems the training is stuck",  # James-QiuHaoran/LLM-serving-with-proxy-models#4 (cases-9)
    "I got one gpu, waiting for a long time.",  # theislab/scarches#100 (cases-9)
    "But epoch is taking too long to run as shown below:",  # MIC-DKFZ/nnUNet#239 (cases-11)
    "The server appears to be starting indefinitely.",  # homelab-00/TranscriptionSuite#207 (cases-11)
    "No meaningful download progress is displayed.",  # homelab-00/TranscriptionSuite#207 (cases-11)
    "the test eventually hangs - around 1000 jobs.",  # Parsl/parsl#738 (cases-12)
    "I found that there is waiting time every 1000 steps during training like this.",  # openpi#441 (cases-13)
    "it stucks here a while before the progress bar appears",  # Yusufma03/pfrnns#8 (cases-13)
    "发生在微调模型的时候，进度特别慢",  # QwenLM/Qwen#970 (cases-14)
])
def test_the_symptom_in_the_reporters_words_is_read(line: str) -> None:
    assert "told-stall" in {s.id for s in scan_told(line)}


@pytest.mark.parametrize("line", [
    "The run finished in 20 minutes and the loss went down.",
    "I take a look at the code and it looks fine.",
    "Training speed is 3 it/s, which is what I expected.",
])
def test_words_that_tell_no_stall_are_not_read_as_one(line: str) -> None:
    assert "told-stall" not in {s.id for s in scan_told(line)}


def test_a_told_symptom_alone_is_used_shown_and_ranks_no_cause() -> None:
    text = ("![image](https://github.com/x/y/assets/1/6c09af56.png)\nIt seems the training is stuck\n")
    d = diagnose_text(text)
    used = [p for p in d.parts if p.used]
    assert used and "the symptom told in words" in used[0].used_as
    assert {i for i in _ids(text) if not is_word_model(i)} == {"told-stall"}
    assert _causes(text) == []  # a hypothesis never appears without its evidence


# ray-project/ray#7802 (cases-11), cut: the script pasted instead of its output, split by its blank lines
RAY_7802 = """You can reproduce the issue with the following script.

```python
import numpy as np
import ray
from ray.cluster_utils import Cluster

c = Cluster()
c.add_node(object_store_memory=first_node_memory)
ray.init(address=c.address)

@ray.remote(num_gpus=1)
class Foo:
    def method(self):
        return np.zeros(10**8)

f = Foo.remote()

ray.wait([x_id])  # This hangs.
```
"""


def test_a_pasted_script_is_read_as_code_with_the_library_calls_it_makes() -> None:
    d = diagnose_text(RAY_7802)
    code = [o for o in d.diagnosis.observations if o.id == "pasted-code"]
    assert len(code) == 1 and "code, not its output" in code[0].text
    assert code[0].figures["calls"] == "ray.init, ray.remote, numpy.zeros, ray.wait"
    assert any(p.used and p.used_as.startswith("Python code") for p in d.parts)
    assert _causes(RAY_7802) == []  # a call is where it waits, not why


def test_a_script_without_its_imports_names_the_modules_it_calls() -> None:
    # Eventual-Inc/Daft#3934 (cases-12): the test function pasted alone; `pool` is assigned, `ray` never is
    lines = ["def test_overprovisioning():", "    ray.init()", "    n = ray.available_resources()[\"CPU\"]",
             "    pool = RayRoundRobinActorPool(", "        \"my-pool\",", "        ResourceRequest(num_cpus=1),", "    )",
             "    pool.setup()"]
    assert python_code.is_code(lines)
    assert python_code.calls(lines, {}) == ("ray.init", "ray.available_resources")


@pytest.mark.parametrize("lines", [
    ["I ran the job with `python train.py` and it printed nothing.", "Then I tried torch.cuda.synchronize() too."],
    ["Steps to reproduce the behavior:", "1. run the server", "2. open the page"],
])
def test_prose_that_names_a_call_is_not_code(lines: list[str]) -> None:
    assert not python_code.is_code(lines)
