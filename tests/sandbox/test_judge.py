"""The stdin/stdout judge on the real sandbox: every verdict class, the LeetCode-style templates in
C++, Java and Python, compile caching, wrong-language answers, checkers, repeated measurement."""

from __future__ import annotations

import asyncio

import pytest

from sandbox import Sandbox
from sandbox.judge import (
    Judge,
    JudgeLimits,
    Program,
    TestCase,
    assemble,
    check,
    describe,
    detect_shape,
    guess_language,
)

SUM_PY = "a, b = map(int, input().split())\nprint(a + b)\n"
FAST = JudgeLimits(time_s=0.5, memory_mb=128, wall_factor=2.0)


@pytest.fixture(scope="module")
def judge(bwrap_box: Sandbox) -> Judge:
    return Judge(bwrap_box)


def run(coro):
    return asyncio.run(coro)


def test_python_programs_get_every_verdict_class_and_the_batch_goes_on(judge: Judge) -> None:
    tests = [TestCase(name="small", input="1 2\n", expected="3\n"), TestCase(name="big", input="40 2\n", expected="42")]
    programs = {
        "accepted": SUM_PY,
        "wrong_answer": "a, b = map(int, input().split())\nprint(a - b)\n",
        "runtime_error": "a, b = map(int, input().split())\nc = int(input())  # reads past its input\nprint(a + b + c)\n",
        "time_limit": "while True:\n    pass\n",
        "memory_limit": "x = bytearray(512 * 1024 * 1024)\nprint(len(x))\n",
        "compile_error": "a, b = map(int, input().split()\nprint(a + b)\n",
        "output_limit": "print('x' * (2 << 20))\n",
    }

    async def all_of() -> dict[str, object]:
        got = await asyncio.gather(
            *(judge.judge(Program(source=src, language="python"), tests, FAST) for src in programs.values())
        )
        return dict(zip(programs, got, strict=True))

    judged = run(all_of())
    for expected, j in judged.items():
        assert j.verdict == expected, (expected, j)
    assert judged["accepted"].passed and [t.output for t in judged["accepted"].tests] == ["3\n", "42\n"]
    assert "EOFError" in judged["runtime_error"].detail and judged["runtime_error"].detail.startswith("small:")
    assert "SyntaxError" in judged["compile_error"].detail and not judged["compile_error"].tests
    assert judged["wrong_answer"].detail.startswith("small: token 1")
    assert judged["accepted"].cpu_s > 0 and judged["accepted"].memory_mb > 0


CPP_SOLUTION = """class Solution {
public:
    vector<string> label(vector<int>& nums, const string& tag, int k) {
        vector<string> out;
        for (int x : nums) if (x % k == 0) out.push_back(tag + to_string(helper(x)));
        return out;
    }
private:
    int helper(int x) { return x / 2; }
};
int main() { return 7; }  // a function task's template drops the answer's own main
"""


def test_cpp_function_template_compiles_once_and_reads_json_arguments(judge: Judge) -> None:
    program = Program(source=CPP_SOLUTION, language="c++", shape="function")
    info = describe(program)
    assert info is not None and (info.name, info.owner) == ("label", "Solution")
    assert info.params == [("nums", "vector<int>&"), ("tag", "const string&"), ("k", "int")]
    compiles = judge.compiles
    good = [
        TestCase(input='[2,3,4,6]\n"n\\"x"\n2\n', expected='["n\\"x1","n\\"x2","n\\"x3"]'),
        TestCase(input='[]\n""\n3\n', expected="[]"),
    ]
    j = run(judge.judge(program, good, FAST, checker="value"))
    assert j.verdict == "accepted", j
    assert j.shape == "function" and j.entry == "label"
    wrong = run(judge.judge(program, [TestCase(input='[2]\n"a"\n2\n', expected='["a2"]')], FAST, checker="value"))
    assert wrong.verdict == "wrong_answer" and "a1" in wrong.detail
    # an input the harness cannot read: the test's fault, unless a reference read it (then the signature
    # of the answer does not fit the task)
    unread = [TestCase(input='[2,\n"a"\n2\n', expected="[]")]
    bad_input = run(judge.judge(program, unread, FAST, checker="value"))
    assert bad_input.verdict == "judge_error" and "bad test input" in bad_input.detail
    misfit = run(
        judge.judge(program, [TestCase(input="[2]\n", expected="[]")], FAST, checker="value", trusted_inputs=True)
    )
    assert misfit.verdict == "runtime_error" and "cannot take the test input" in misfit.detail
    assert judge.compiles == compiles + 1  # one compile for the four judgements


def test_cpp_compile_error_and_wrong_language_answers(judge: Judge) -> None:
    broken = run(
        judge.judge(
            Program(source="#include <cstdio>\nint main() { return x; }\n", language="cpp"),
            [TestCase(input="", expected="")],
            FAST,
        )
    )
    assert broken.verdict == "compile_error" and "x" in broken.detail and "error" in broken.compile_output
    # a C++ answer where Python is wanted: a compile error that says what it looks like
    cpp_as_python = run(
        judge.judge(
            Program(source="#include <iostream>\nint main() { std::cout << 3; }\n", language="python"),
            [TestCase(input="", expected="3")],
            FAST,
        )
    )
    assert cpp_as_python.verdict == "compile_error"
    assert cpp_as_python.detail.startswith("the answer looks like cpp, not python")


JAVA_SOLUTION = """import java.util.List;

public class Solution {
    public List<List<Integer>> levels(TreeNode root, int[] extra) {
        List<List<Integer>> out = new ArrayList<>();
        Deque<TreeNode> queue = new ArrayDeque<>();
        if (root != null) queue.add(root);
        while (!queue.isEmpty()) {
            List<Integer> level = new ArrayList<>();
            for (int n = queue.size(); n > 0; n--) {
                TreeNode t = queue.poll();
                level.add(t.val);
                if (t.left != null) queue.add(t.left);
                if (t.right != null) queue.add(t.right);
            }
            out.add(level);
        }
        List<Integer> tail = new ArrayList<>();
        for (int x : extra) tail.add(x);
        out.add(tail);
        return out;
    }
}
"""


def test_java_function_template_with_tree_input_and_nested_list_output(judge: Judge) -> None:
    tests = [
        TestCase(input="[3,9,20,null,null,15,7]\n[1,2]\n", expected="[[3],[9,20],[15,7],[1,2]]"),
        TestCase(input="[]\n[]\n", expected="[[]]"),
    ]
    j = run(judge.judge(Program(source=JAVA_SOLUTION, language="java"), tests, JudgeLimits(time_s=2.0)))
    assert j.verdict == "accepted", j
    assert j.entry == "levels" and all(t.memory_mb > 0 for t in j.tests)


def test_java_program_that_reads_past_its_input_is_a_runtime_error(judge: Judge) -> None:
    src = (
        "import java.util.Scanner;\npublic class Reader {\n  public static void main(String[] a) {\n"
        "    Scanner s = new Scanner(System.in);\n    long x = s.nextLong(), y = s.nextLong();\n"
        "    System.out.println(x + y);\n  }\n}\n"
    )
    j = run(
        judge.judge(
            Program(source=src, language="java"),
            [TestCase(name="full", input="1 2\n", expected="3"), TestCase(name="short", input="1\n", expected="1")],
            JudgeLimits(time_s=2.0),
        )
    )
    assert j.shape == "program"
    assert [t.verdict for t in j.tests] == ["accepted", "runtime_error"]
    assert j.verdict == "runtime_error" and "NoSuchElementException" in j.detail


def test_python_function_template_lists_trees_and_in_place_results(judge: Judge) -> None:
    src = (
        "class Solution:\n"
        "    def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:\n"
        "        prev = None\n        while head:\n            head.next, prev, head = prev, head, head.next\n"
        "        return prev\n\n"
        "print('example run that must not reach stdout')\n"
    )
    j = run(
        judge.judge(
            Program(source=src, language="python"),
            [TestCase(input="[1,2,3]\n", expected="[3,2,1]"), TestCase(input="[]\n", expected="[]")],
            FAST,
            checker="value",
        )
    )
    assert j.verdict == "accepted", j
    in_place = "def rotate(nums, k):\n    k %= len(nums)\n    nums[:] = nums[-k:] + nums[:-k]\n"
    j = run(
        judge.judge(
            Program(source=in_place, language="python", shape="function"),
            [TestCase(input="[1,2,3,4]\n1\n", expected="[4,1,2,3]")],
            FAST,
            checker="value",
        )
    )
    assert j.verdict == "accepted", j


def test_measure_repeats_each_program_and_tells_slow_from_fast(judge: Judge) -> None:
    slow = "n = int(input())\nprint(sum(i for i in range(n) for _ in range(40)))\n"
    fast = "n = int(input())\nprint(n * (n - 1) // 2 * 40)\n"
    tests = [TestCase(input="100000\n", expected=None)]
    slow_u, fast_u = run(
        judge.measure(
            [Program(source=slow, language="python"), Program(source=fast, language="python")],
            tests,
            JudgeLimits(time_s=5.0),
            repeats=3,
        )
    )
    assert len(slow_u.cpu_s) == len(fast_u.cpu_s) == 3 and slow_u.failures == fast_u.failures == 0
    assert slow_u.mean_cpu_s > 3 * fast_u.mean_cpu_s
    assert slow_u.mean_memory_mb > 0 and fast_u.mean_memory_mb > 0


def test_checkers() -> None:
    assert check("value", "", '"bab"', '"bab"\n') == (True, "")
    assert check("value", "", "2.00000", "2.0\n")[0] and check("value", "", "[0.1,2]", "[0.100001,2]")[0]
    assert not check("value", "", "[1,2]", "[2,1]")[0] and not check("value", "", "true", "1")[0]
    assert check("value", "", "PAHN", '"PAHN"')[0]  # a bare expected word matches the quoted string
    assert check("numbers", "", "1 2.5\n", "1\n2.5000001")[0] and not check("numbers", "", "10", "10.5")[0]
    assert not check("tokens", "", "1 2", "1 2 3")[0] and check("tokens", "", "1  2\n", "1 2")[0]
    assert check("lines", "", "a \nb\n\n", "a\nb")[0] and not check("lines", "", "a b", "ab")[0]
    assert check("exact", "", "a\r\n", "a\n")[0] and not check("exact", "", "a", "a\n")[0]
    assert check(lambda i, e, o: o.strip() == i.strip(), "7", "", "7\n") == (True, "")
    with pytest.raises(ValueError, match="unknown checker"):
        check("fuzzy", "", "", "")


def test_shapes_entries_and_language_guesses() -> None:
    assert detect_shape("cpp", "#include <cstdio>\nint main(){}") == "program"
    assert detect_shape("cpp", "class Solution { public: int f(int n) { return n; } };") == "function"
    assert detect_shape("java", "class A { public static void main(String[] a) {} }") == "program"
    assert detect_shape("python", "n = int(input())\nprint(n)\n") == "program"
    assert detect_shape("python", "MOD = 7\ndef f(x):\n    return x % MOD\n") == "function"
    info = describe(
        Program(
            source="def helper(x):\n    return x\n\ndef solve(a, b):\n    return helper(a) + b\n", language="python"
        )
    )
    assert info is not None and info.name == "solve" and [p[0] for p in info.params] == ["a", "b"]
    java = describe(
        Program(
            source="int maxBooks(int[] books) { return go(books, 0); }\nprivate int go(int[] b, int i) { return i; }\n",
            language="java",
        )
    )
    assert java is not None and java.name == "maxBooks" and java.params == [("books", "int[]")]
    assert guess_language("#include <vector>\nint main() { std::vector<int> v; }") == "cpp"
    assert (
        guess_language("public class A {\n  public static void main(String[] a) { System.out.println(1); }\n}")
        == "java"
    )
    assert guess_language("def f(x):\n    if x:\n        return len(x)\n    return None\n") == "python"
    assert guess_language("x") is None
    _, shape, files, entry = assemble(Program(source="int f(int a) { return a; }", language="java"))
    assert shape == "function" and entry == "f" and "class Solution {" in files["JudgeMain.java"]
