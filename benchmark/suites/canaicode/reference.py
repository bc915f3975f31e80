"""Reference answers for the `gold` backend: one correct Python and JavaScript implementation per kind of
question, with the function and argument names taken from the question's `Signature`.

can-ai-code ships no reference solutions; these exist so that `--backend gold` exercises the whole path
(server, extraction, sandbox, checks) with answers that must score full points. A question without a
kind here has no gold answer (the engine records it as missing).
"""

from __future__ import annotations

import re

from benchmark.suites.canaicode.interview import InterviewQuestion

_SIGNATURE = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*$")

PYTHON: dict[str, str] = {
    "factorial_iterative": "def NAME(A0):\n    result = 1\n    for i in range(2, A0 + 1):\n        result *= i\n    return result\n",
    "factorial_recursive": "def NAME(A0):\n    if A0 <= 1:\n        return 1\n    return A0 * NAME(A0 - 1)\n",
    "fib_value": "def NAME(A0):\n    a, b = 0, 1\n    for _ in range(A0):\n        a, b = b, a + b\n    return a\n",
    "fib_list": "def NAME(A0):\n    out = []\n    a, b = 0, 1\n    for _ in range(A0):\n        out.append(a)\n        a, b = b, a + b\n    return out\n",
    "gcd": "def NAME(A0, A1):\n    while A1:\n        A0, A1 = A1, A0 % A1\n    return A0\n",
    "meaning_of_life": "def NAME():\n    return 42\n",
    "things": "def NAME():\n    return [5, 'foobar', 'Madrid']\n",
    "secret_identities": (
        "def NAME():\n    return {'Superman': 'Clark Kent', 'Batman': 'Bruce Wayne', 'Spider-Man': 'Peter Parker'}\n"
    ),
    "substring_count": (
        "def NAME(A0, A1):\n    count = 0\n    start = A0.find(A1)\n    while start != -1:\n"
        "        count += 1\n        start = A0.find(A1, start + len(A1))\n    return count\n"
    ),
    "flatten": (
        "def NAME(A0):\n    out = {}\n\n    def walk(value, key):\n        if isinstance(value, dict):\n"
        "            for k, v in value.items():\n                walk(v, key + '.' + str(k) if key else str(k))\n"
        "        elif isinstance(value, list):\n            for i, v in enumerate(value):\n"
        "                walk(v, key + '.' + str(i) if key else str(i))\n        else:\n"
        "            out[key] = value\n\n    walk(A0, '')\n    return out\n"
    ),
    "assemble": (
        "def NAME(A0):\n    opcodes = {'CONTROL': 0, 'COND': 128, 'LOAD': 4, 'SWP': 8, 'PUSH': 32, 'POP': 33}\n"
        "    out = []\n    for line in A0:\n        words = line.split('#', 1)[0].split()\n        if not words:\n"
        "            continue\n        argument = int(words[1]) if len(words) > 1 else 0\n"
        "        out += [opcodes[words[0]], argument & 0xFF]\n    return out\n"
    ),
}

JAVASCRIPT: dict[str, str] = {
    "factorial_iterative": "function NAME(A0) {\n  let result = 1;\n  for (let i = 2; i <= A0; i++) result *= i;\n  return result;\n}\n",
    "factorial_recursive": "function NAME(A0) {\n  return A0 <= 1 ? 1 : A0 * NAME(A0 - 1);\n}\n",
    "fib_value": "function NAME(A0) {\n  let a = 0, b = 1;\n  for (let i = 0; i < A0; i++) [a, b] = [b, a + b];\n  return a;\n}\n",
    "fib_list": (
        "function NAME(A0) {\n  const out = [];\n  let a = 0, b = 1;\n  for (let i = 0; i < A0; i++) {\n"
        "    out.push(a);\n    [a, b] = [b, a + b];\n  }\n  return out;\n}\n"
    ),
    "gcd": "function NAME(A0, A1) {\n  while (A1) [A0, A1] = [A1, A0 % A1];\n  return A0;\n}\n",
    "meaning_of_life": "function NAME() {\n  return 42;\n}\n",
    "things": "function NAME() {\n  return [5, 'foobar', 'Madrid'];\n}\n",
    "secret_identities": (
        "function NAME() {\n  return { 'Superman': 'Clark Kent', 'Batman': 'Bruce Wayne', "
        "'Spider-Man': 'Peter Parker' };\n}\n"
    ),
    "substring_count": (
        "function NAME(A0, A1) {\n  let count = 0;\n  let start = A0.indexOf(A1);\n"
        "  while (start !== -1) {\n    count++;\n    start = A0.indexOf(A1, start + A1.length);\n  }\n"
        "  return count;\n}\n"
    ),
    "flatten": (
        "function NAME(A0) {\n  const out = {};\n  function walk(value, key) {\n"
        "    if (value !== null && typeof value === 'object') {\n"
        "      for (const [k, v] of Object.entries(value)) walk(v, key ? key + '.' + k : String(k));\n"
        "    } else {\n      out[key] = value;\n    }\n  }\n  walk(A0, '');\n  return out;\n}\n"
    ),
    "assemble": (
        "function NAME(A0) {\n  const opcodes = { CONTROL: 0, COND: 128, LOAD: 4, SWP: 8, PUSH: 32, POP: 33 };\n"
        "  const out = [];\n  for (const line of A0) {\n    const words = line.split('#')[0].trim().split(/\\s+/);\n"
        "    if (!words[0]) continue;\n    const argument = words.length > 1 ? parseInt(words[1], 10) : 0;\n"
        "    out.push(opcodes[words[0]], argument & 0xFF);\n  }\n  return out;\n}\n"
    ),
}

# question -> kind; `SET/Name` entries win over plain names (FibonacciMisnamed differs between sets)
KINDS: dict[str, str] = {
    "FactorialZeroShot": "factorial_iterative",
    "FactorialRecursiveZeroShot": "factorial_recursive",
    "FactorialMisnamed": "factorial_iterative",
    "FibonacciZeroShot": "fib_value",
    "FibonacciListZeroShot": "fib_list",
    "FibonacciListMisnamed": "fib_list",
    "junior-dev/FibonacciMisnamed": "fib_list",
    "junior-v2/FibonacciMisnamed": "fib_value",
    "GCDZeroShot": "gcd",
    "GCDAlternative": "gcd",
    "GCDMisnamed": "gcd",
    "SanityMeaningOfLife": "meaning_of_life",
    "SanityList": "things",
    "SanitySecretIdentityMap": "secret_identities",
    "StringCountTokens": "substring_count",
    "FlattenZeroShot": "flatten",
    "VMAssemblerSimple": "assemble",
    "VMAssemblerSimple2": "assemble",
}


def signature(question: InterviewQuestion) -> tuple[str, list[str]] | None:
    m = _SIGNATURE.match(question.signature)
    if m is None:
        return None
    return m.group(1), [a.strip() for a in m.group(2).split(",") if a.strip()]


def reference_answer(question: InterviewQuestion, language: str) -> str | None:
    kind = KINDS.get(question.task_id) or KINDS.get(question.name)
    sig = signature(question)
    table = PYTHON if language == "python" else JAVASCRIPT if language == "javascript" else {}
    if kind is None or sig is None or kind not in table:
        return None
    name, args = sig
    code = table[kind]
    for i in reversed(range(len(args))):  # A10 before A1
        code = re.sub(rf"\bA{i}\b", args[i], code)
    return re.sub(r"\bNAME\b", name, code)
