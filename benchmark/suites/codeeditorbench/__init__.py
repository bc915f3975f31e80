"""Suite `codeeditorbench` (SPEC 3.7): debug, translate, polish and switch tasks judged as programs.

Data (`DATA/codeeditorbench/`): the published jsonl files with their own field names. The full set is
eight files on the Hugging Face hub (`m-a-p/CodeEditorBench`: `code_{debug,translate,polishment,switch}_
{primary,plus}.jsonl`), fetched by `python -m benchmark.suites.codeeditorbench download`; offline there are the
paper's three few-shot tasks per kind (`cluster_*.jsonl`). The loader takes the primary set when it is
there, else the samples (`EDIT_FIDELITY_CODEEDITORBENCH_SET=primary|plus|sample` chooses); `--limit N`
takes the first N tasks of each kind.

Each task is one document for the server: debug opens the incorrect solution, translate the source
program (requestEdit's `answerLanguage` is the target language: the server asks for, and extracts,
code of that language, and the answer is judged in it), polish the original solution, switch the similar
problem's solution. Instructions are the paper's zero-shot prompts (`api_inference.py`), without the
code, which the server sends itself; conditions `KIND-3shot` add the paper's three worked examples
(its `cluster_*` tasks, minus the task asked).

Judging (`sandbox.judge`): the completion runs as a stdin/stdout program (Codeforces-style tasks) or
as a LeetCode-style function inside the judge's per-language harness, on the public and private
tests, under per-language limits. Test inputs and expected outputs come from the task; LeetCode-style
tasks publish their inputs as text (`nums = [1,2], k = 3`, scraped with Markdown escapes and a space
before each closing quote) and no private outputs: inputs are converted to one JSON line per
parameter and missing outputs come from running the task's reference (debug: the correct solution;
translate: the source program; polish: the original; switch: the target solution), which is recorded
per task; when the reference contradicts a published output, it stands in for nothing. A test whose
input cannot be read or whose reference run fails is left out, with the reason. Problems with more
than one right output are judged by a special judge (`SPECIAL_JUDGES`: the two sample problems that
need one, Codeforces 670C and 1368C); elsewhere outputs are compared as tokens (programs) or as values.

Metrics: pass@1 (fraction, as the paper) for every kind; polish OptScore per SPEC 3.7: the original
and the accepted candidate run `OPT_REPEATS` times each over the tests, interleaved in the same
sandbox; T, M, t, m are the mean CPU seconds (summed over the tests) and mean peak memory; a
candidate scores max(((T - t)/T + (M - m)/M) / 2, 0), anything not accepted 0 (`opt_score`). Noise:
`opt_score_margin` is the same with each relative gain whose size is under its noise margin counted as
0; the margin is max(5 %, 2 standard errors of the difference of the two means, relative to the
original's mean), so an unchanged program scores exactly 0 there while it may score a few hundredths
from noise in the compatible mode. Win Rate across backends: `win_rate` over several run summaries.
Fidelity (debug, polish, switch): the server's report of the edit against the original buffer, as
recorded, in the document's language; for C++/Java answers the judge adds `lang_fidelity` (token
distance, excess over the gold edit, cyclomatic and Sonar cognitive deltas, through the core's
tree-sitter layer: the paper's complexity metric is Python-only), averaged in the summary.

Modules, one job each: `kinds` (conditions), `records` and `tasks` (the published files, the loader, the
worked examples), `prompts`, `inputs` (LeetCode-style test text), `special` (special judges), `testsets`
(a task's tests), `scores` (OptScore, Win Rate), `suite` (the parts: `Judging` is the judging glue; `make` the suite),
`summary` (report sections), `download`, `check` and `cli` (`python -m benchmark.suites.codeeditorbench`).
"""

from __future__ import annotations

from benchmark.suite import Verdict
from benchmark.suites.codeeditorbench.check import check_tasks, expected_rejection
from benchmark.suites.codeeditorbench.download import DownloadError, download, download_file, hub_endpoint, hub_url
from benchmark.suites.codeeditorbench.inputs import InputError, argument_lines, descrape, expected_value, literal
from benchmark.suites.codeeditorbench.kinds import CATEGORY_METRIC, CONDITIONS, KINDS, NAME, kind_of
from benchmark.suites.codeeditorbench.prompts import LANGUAGE_NAMES, PREAMBLE, question
from benchmark.suites.codeeditorbench.records import (
    RECORDS,
    DebugRecord,
    PolishRecord,
    SwitchRecord,
    Tests,
    TranslateRecord,
)
from benchmark.suites.codeeditorbench.scores import (
    OPT_MARGIN_FLOOR,
    OPT_MARGIN_Z,
    OPT_REPEATS,
    WinRate,
    noise_margin,
    opt_score,
    opt_score_margin,
    polish_metrics,
    win_rate,
)
from benchmark.suites.codeeditorbench.special import SPECIAL_JUDGES, check_cinema, check_even_picture
from benchmark.suites.codeeditorbench.suite import Judging, make
from benchmark.suites.codeeditorbench.summary import compare_backends, render_text, summarise
from benchmark.suites.codeeditorbench.tasks import (
    HUB_KIND,
    HUB_REPO,
    SET_ENV,
    SETS,
    SUBDIR,
    LoadIssue,
    Task,
    choose_set,
    clean_code,
    data_files,
    few_shot_examples,
    instruction,
    load,
)
from benchmark.suites.codeeditorbench.testsets import (
    MEMORY_MB,
    TIME_FACTOR,
    TIME_LIMIT_S,
    TaskTests,
    build_tests,
    checker_of,
    limits_for,
)

__all__ = [
    "CATEGORY_METRIC",
    "CONDITIONS",
    "DebugRecord",
    "DownloadError",
    "HUB_KIND",
    "HUB_REPO",
    "InputError",
    "Judging",
    "KINDS",
    "LANGUAGE_NAMES",
    "LoadIssue",
    "MEMORY_MB",
    "NAME",
    "OPT_MARGIN_FLOOR",
    "OPT_MARGIN_Z",
    "OPT_REPEATS",
    "PREAMBLE",
    "PolishRecord",
    "RECORDS",
    "SETS",
    "SET_ENV",
    "SPECIAL_JUDGES",
    "SUBDIR",
    "SwitchRecord",
    "TIME_FACTOR",
    "TIME_LIMIT_S",
    "Task",
    "TaskTests",
    "Tests",
    "TranslateRecord",
    "Verdict",
    "WinRate",
    "argument_lines",
    "build_tests",
    "check_cinema",
    "check_even_picture",
    "check_tasks",
    "checker_of",
    "choose_set",
    "clean_code",
    "compare_backends",
    "data_files",
    "descrape",
    "download",
    "download_file",
    "expected_rejection",
    "expected_value",
    "few_shot_examples",
    "hub_endpoint",
    "hub_url",
    "instruction",
    "kind_of",
    "limits_for",
    "literal",
    "load",
    "make",
    "noise_margin",
    "opt_score",
    "opt_score_margin",
    "polish_metrics",
    "question",
    "render_text",
    "summarise",
    "win_rate",
]
