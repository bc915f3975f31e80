"""Fetch the can-ai-code interviews from github.com/the-crypt-keeper/can-ai-code into DATA/canaicode.

Required: the interview sets `junior-dev/`, `junior-v2/`, `senior/` (upstream folders of the same names) and the
prompt templates the suite renders (`prompts_params/` gathers upstream's `prompts/*.txt|json`). Optional: the
sampling parameter files (upstream `params/`) and six published eval files (`results_sample/`, upstream
`results/closed/`); one that fails is reported and skipped. `results_summary_all_eval_files.csv` is not an
upstream file and is not fetched (the regrade tool runs without it).

Every file is pinned to a commit and checked against its SHA-256 (the content the suite is verified on), so the
folder a download writes reads exactly like the shared data directory's `canaicode/`. The file named twice
(`factorial.yaml`, identical in both junior sets) is fetched from one upstream path.
`EDIT_FIDELITY_CANAICODE_URL` replaces `https://raw.githubusercontent.com/the-crypt-keeper/can-ai-code`: a
mirror serves `BASE/COMMIT/PATH` (the raw-file layout). Files already present with the right SHA-256 are kept;
every file lands atomically, so a failed download leaves no partial file.
"""

from __future__ import annotations

from pathlib import Path

from benchmark.download import Pinned, PinnedFiles

REPO = "the-crypt-keeper/can-ai-code"
RAW_URL = f"https://raw.githubusercontent.com/{REPO}"
URL_ENV = "EDIT_FIDELITY_CANAICODE_URL"
FOLDER = "canaicode"


# June 2024: the commit that added the closed-model chat-simple runs (the six samples below)
_JUNE24 = "e3e017716d84709f2f85261094b14a77449fcf06"
_CLOSED = "results/closed/eval_{}_python-javascript_chat-simple_none_greedy-openai_{}.ndjson"


def _sample(interview: str, run: str, commit: str, sha256: str) -> Pinned:
    path = _CLOSED.format(interview, run)
    return Pinned(f"results_sample/{Path(path).name}", commit, path, sha256, required=False)


FILES: tuple[Pinned, ...] = (
    Pinned(
        "junior-dev/factorial.yaml",
        "17703f9520f5bdab11fd591c1fc87f5d099961ba",
        "junior-dev/factorial.yaml",
        "788d2080cababd5adf95614df8efcb942358a2be69144c97040bbbb6abbf39d0",
    ),
    Pinned(
        "junior-dev/fib.yaml",
        _JUNE24,
        "junior-dev/fib.yaml",
        "740d031b38f03b57b96aa4fafe4dce6cf0d9552710d3b090e310ed670e2fdb02",
    ),
    Pinned(
        "junior-dev/gcd.yaml",
        "17703f9520f5bdab11fd591c1fc87f5d099961ba",
        "junior-dev/gcd.yaml",
        "8e8fa38386daa02aae79dc6ec765941d777a81543f0ffe96b5f09ac238311d9c",
    ),
    Pinned(
        "junior-dev/sanity.yaml",
        "256ee678d09f7bd5ab07368034c834fd6c1e4d03",
        "junior-dev/sanity.yaml",
        "123cbbcba97f81342aadc44e5d75c50634085188079255d221054e7a40c66590",
    ),
    Pinned(
        "junior-dev/string.yaml",
        "196f4bb6eccda4c71946bd2ddf54cb67795ba5ab",
        "junior-dev/string.yaml",
        "1768f396bee1bfc6d207ab0fc8495d7ef04f3168a09f1281b2fbd2c04991ac6d",
    ),
    Pinned(
        "junior-v2/factorial.yaml",
        "17703f9520f5bdab11fd591c1fc87f5d099961ba",
        "junior-dev/factorial.yaml",
        "788d2080cababd5adf95614df8efcb942358a2be69144c97040bbbb6abbf39d0",
    ),
    Pinned(
        "junior-v2/fib.yaml",
        "ff60f222933e163089f85236e0e9368976873888",
        "junior-v2/fib.yaml",
        "e711374055a5635f0f527607404c1006b63e461c2dbe30bc33d0dc60086c13f0",
    ),
    Pinned(
        "junior-v2/gcd.yaml",
        "2d246894b14d79afcf048969e5638523cf0e7cf9",
        "junior-v2/gcd.yaml",
        "a820f6cf54e54f059255f05c05d8f96976ca35e99e1ff63c6545191083b1e016",
    ),
    Pinned(
        "junior-v2/sanity.yaml",
        "ff60f222933e163089f85236e0e9368976873888",
        "junior-v2/sanity.yaml",
        "ee62b25baadbc9187ad0f00befe4f19bf897508282e9004aa6c44117ffdb823a",
    ),
    Pinned(
        "junior-v2/string.yaml",
        "ff60f222933e163089f85236e0e9368976873888",
        "junior-v2/string.yaml",
        "eedf3ae65e335a27abf16535d46a38858da88570dcb7fb858a8f248df61442c2",
    ),
    Pinned(
        "senior/recursion.yaml",
        _JUNE24,
        "senior/recursion.yaml",
        "7b4e6981d45e1a152ccf8bb65c153a4c33adfca6da0ac76572e15aee86c1ad48",
    ),
    Pinned(
        "senior/vm.yaml",
        "4dbdf5b43c67a53b7d9e9324153c82441d144e4d",
        "senior/vm.yaml",
        "430dc2e0c7acb1cf4e653dcf4331d2e0baffd049c9376786702076a0a159d508",
    ),
    Pinned(
        "prompts_params/chat-simple.txt",
        _JUNE24,
        "prompts/chat-simple.txt",
        "e54358fd314df944f3a11d60a97fbe136b60963a2c674e050284f9407851f6f0",
    ),
    Pinned(
        "prompts_params/chat-simple-v2.txt",
        "d77700f628beaf9d7b1f8a52e2f5a165bbf36e60",
        "prompts/chat-simple-v2.txt",
        "e10ff545f5866b3d3d42f34557cd062f4ebc6cdd04b1a85896db920808634d09",
    ),
    Pinned(
        "prompts_params/chat.json",
        "bb210c567ccab9ba2a66322319944c163127e05b",
        "prompts/chat.json",
        "31f3a40bf7a167faa3ec5a022d917287415afd07012e78a41ebe70bb09d9b30a",
    ),
    Pinned(
        "prompts_params/greedy-hf.json",
        "2e001070efc9b534c6107d875ff7efae9b12baa7",
        "params/greedy-hf.json",
        "8e67554f677d8ee89ee7b1d7e897a5e632c82c46cbd1186e6a203a50a60d2064",
        required=False,
    ),
    Pinned(
        "prompts_params/greedy-openai.json",
        "4dbdf5b43c67a53b7d9e9324153c82441d144e4d",
        "params/greedy-openai.json",
        "c0e772c068da35e61d05873128a72f8863db1594d011f780817707d3902d87b4",
        required=False,
    ),
    Pinned(
        "prompts_params/precise.json",
        _JUNE24,
        "params/precise.json",
        "2b9fadc52ddd6313ab602ca4a0b1e6b1355d12cefbf70ceb05ce88888f7e7292",
        required=False,
    ),
    _sample(
        "junior-v2",
        "anthropic-claude-3-5-sonnet-20240620_1719249968",
        "d77be5e0212e6463165ed70e916a9b0216389634",
        "15d25276442b9717770567f5208d0fd2149c985f7ce511064ba5ac5227b8a148",
    ),
    _sample(
        "junior-v2",
        "openai-gpt-3.5-turbo-0125_1717532591",
        _JUNE24,
        "3135584e9b03246881a991958d4aa326b18a5f3c127217ce4cd3ec15f01c0e88",
    ),
    _sample(
        "junior-v2",
        "openai-gpt-4o-2024-05-13_1717530410",
        _JUNE24,
        "d97ce82587db45565da82bef20b47694bd80f87cbeb8cdb6d044a8e996bee8d6",
    ),
    _sample(
        "senior",
        "anthropic-claude-3-5-sonnet-20240620_1719249654",
        "d77be5e0212e6463165ed70e916a9b0216389634",
        "67532b3f0c0d1678d0791180c9dbda01a3b82942553a762bf07249d3712d3132",
    ),
    _sample(
        "senior",
        "openai-gpt-3.5-turbo-0125_1717532506",
        "4505b3da878d85d0ed3d56afaec2aba16d0c9083",
        "424cacc101432f2fccf844c1fe68487e6f04960fc37f54216871aa6fbfbb3bf6",
    ),
    _sample(
        "senior",
        "openai-gpt-4o-2024-05-13_1717530210",
        _JUNE24,
        "e6f204a46b8c6b42ca635fe3108026585ec6bd0da09e6b43028b7f9ba7811561",
    ),
)

PINNED = PinnedFiles("can-ai-code", FOLDER, RAW_URL, URL_ENV, FILES)
download = PINNED.download
ensure = PINNED.ensure
