"""Fetch the BICS data (snippet table and published per-trial results) from the paper's GitHub repository.

Upstream is the Bug In The Code Stack repository of the paper's author (github.com/techandy42/bug_in_the_code_stack,
also published as HammingHQ/bug-in-the-code-stack). Every file is pinned to a commit at which that repository
holds exactly this content, and checked against its SHA-256, so a download is reproducible: the folder it
writes reads exactly like the shared data directory's `bics/`. Later upstream commits moved the original
benchmark under `bicsv1/`; the five result files pinned there are the same bytes as the earlier `stats/` copies.

`EDIT_FIDELITY_BICS_URL` replaces `https://raw.githubusercontent.com/techandy42/bug_in_the_code_stack`: a mirror
serves `BASE/COMMIT/PATH` (the raw-file layout). Files already present with the right SHA-256 are kept;
every file lands atomically, so a failed download leaves no partial file.
"""

from __future__ import annotations

from benchmark.download import Pinned, PinnedFiles

REPO = "techandy42/bug_in_the_code_stack"
RAW_URL = f"https://raw.githubusercontent.com/{REPO}"
URL_ENV = "EDIT_FIDELITY_BICS_URL"
FOLDER = "bics"


_A = "2098f079f5830553bc30f3c0e91d03887e8b2737"  # root layout, June 2024 (after the Codestral/CodeQwen runs)
_V1 = "7b5b3b018a8e3e39e74f3fad1adbe4b591106dba"  # after the move to bicsv1/
FILES: tuple[Pinned, ...] = (
    Pinned(
        "bug_in_the_code_stack_alpaca_dataset.csv",
        _A,
        "datasets/bug_in_the_code_stack_alpaca_dataset.csv",
        "3e07b80716ef480a19ef71ffe8712f322b56aeb2980e122f3b101920b0b4da2d",
    ),
    Pinned(
        "stats/claude_3_opus/result_20240505201038563219.csv",
        "ef26901cd89ff0a23522bf829299b85e9552d716",
        "stats/claude_3_opus/result_20240505201038563219.csv",
        "e80e115a40ad41334e51e6372122f1e88362ba190ceb5780d69e120f11616746",
    ),
    Pinned(
        "stats/codeqwen15_few_shot/result_20240604002857124718.csv",
        _A,
        "stats/codeqwen15_few_shot/result_20240604002857124718.csv",
        "d771a28eb16017d63589e8e0c1e4f79793e9a1874157cc1d9ce7654c4e7194d9",
    ),
    Pinned(
        "stats/codeqwen15_zero_shot/result_20240604004747201720.csv",
        "69438fbb968d38a06a8b01c2b1ee86e411c10847",
        "stats/codeqwen15_zero_shot/result_20240604004747201720.csv",
        "7cbdc329448231ea849efa7c2dacc85b5e0200a86781d48fb64a7efe8c5ea98f",
    ),
    Pinned(
        "stats/codestral/result_20240604024842769514.csv",
        "69438fbb968d38a06a8b01c2b1ee86e411c10847",
        "stats/codestral/result_20240604024842769514.csv",
        "c4020d987038342235d9148656acccdd9f6d43f6ef9ffe1232bc95a8790adf16",
    ),
    Pinned(
        "stats/command_r_plus/result_20240505150822068215.csv",
        _V1,
        "bicsv1/stats/command_r_plus/result_20240505150822068215.csv",
        "f6998d516689f01c6c4ab9ae23231737ce2c401230b50756c384fb30e13f687a",
    ),
    Pinned(
        "stats/gemini_10_pro/result_20240505142359590774.csv",
        _V1,
        "bicsv1/stats/gemini_10_pro/result_20240505142359590774.csv",
        "3edf10a41449d79039809185812b22711d7eb224b5a7e65655c5db7355d1a3c8",
    ),
    Pinned(
        "stats/gemini_15_flash/result_20240529212302179828.csv",
        _A,
        "stats/gemini_15_flash/result_20240529212302179828.csv",
        "52b524eb4a425443f15b45187826e5b63efa2cd93b8e8a90e3b3ffb34ce59b0d",
    ),
    Pinned(
        "stats/gemini_15_pro/result_20240529212259718906.csv",
        "9406d7dce3aa8ffa83815afb3e8f1fc0831890a8",
        "stats/gemini_15_pro/result_20240529212259718906.csv",
        "3834adaa97a3108e1b33e7a32ad6b35dee607f49870aa17c5508f7e3edb08b23",
    ),
    Pinned(
        "stats/gpt_35_turbo/result_20240504144026579355.csv",
        _A,
        "stats/gpt_35_turbo/result_20240504144026579355.csv",
        "80822599b9be98b0b15ff2a483a2c270676097372a8d85cba834729665d8e013",
    ),
    Pinned(
        "stats/gpt_35_turbo_run2/result_20240504145558144333.csv",
        _A,
        "stats/gpt_35_turbo_run2/result_20240504145558144333.csv",
        "29f543242fbc77ec6f8a730e4984cd195507dc77fc3ec0c408550e74b1608197",
    ),
    Pinned(
        "stats/gpt_35_turbo_run3/result_20240505202830677708.csv",
        _A,
        "stats/gpt_35_turbo_run3/result_20240505202830677708.csv",
        "41cf2cfa52a24776b6e3bbd836d2730f4a464d2838d552dd94af1ed2244c71bd",
    ),
    Pinned(
        "stats/gpt_4_turbo/result_20240504142314472904.csv",
        _V1,
        "bicsv1/stats/gpt_4_turbo/result_20240504142314472904.csv",
        "5ea11f982846e8f817a2d2bcb38dd56ea150f5b64fbcbbea4b5b8a5dc87c5a4e",
    ),
    Pinned(
        "stats/gpt_4o/result_20240515025037835626.csv",
        _V1,
        "bicsv1/stats/gpt_4o/result_20240515025037835626.csv",
        "86119154605b79d5bd6ff5aea803e870a18614c1a627c98854fa257a9df09536",
    ),
    Pinned(
        "stats/llama3_70b/result_20240505150822068214.csv",
        _V1,
        "bicsv1/stats/llama3_70b/result_20240505150822068214.csv",
        "11df90ab6d6ce235a45273c61474779e47b0f7ceefea64f2fb594ebe28244ecd",
    ),
)

PINNED = PinnedFiles("BICS", FOLDER, RAW_URL, URL_ENV, FILES)
download = PINNED.download
ensure = PINNED.ensure
