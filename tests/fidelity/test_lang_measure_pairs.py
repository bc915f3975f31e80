"""Every hunk kind on a hand-made pair in each language of the tree-sitter layer (issue 18): the kinds
`measure(..., language=...)` gives, exactly, with both sides parsing.

Each pair is the smallest edit that shows the language's own form of the kind: `typeof`/`instanceof`,
`Objects.requireNonNull`, `== NULL`, `nullptr` checks, try/catch, `if err != nil`, `unwrap()` replaced
by a `match`; `//`, `/* */`, `///` and `/** */` comments; `#include`, `import`, `use`.
"""

from __future__ import annotations

import pytest

from server.fidelity.measure import measure

P = {}

P["javascript"] = {
    "rename_local": (
        "function f(a) {\n  const total = a + 1;\n  return total;\n}\n",
        "function f(a) {\n  const sum = a + 1;\n  return sum;\n}\n",
    ),
    "rename_param": (
        "function f(items) {\n  return items.length;\n}\n",
        "function f(list) {\n  return list.length;\n}\n",
    ),
    "rename_function": (
        "function size(x) {\n  return x.length;\n}\nconsole.log(size([1]));\n",
        "function length(x) {\n  return x.length;\n}\nconsole.log(length([1]));\n",
    ),
    "comment_removed": ("function f(a) {\n  // add one\n  return a + 1;\n}\n", "function f(a) {\n  return a + 1;\n}\n"),
    "doc_comment_removed": (
        "/**\n * Adds one.\n */\nfunction f(a) {\n  return a + 1;\n}\n",
        "function f(a) {\n  return a + 1;\n}\n",
    ),
    "formatting_only": ("function f(a) {\n  return a + 1;\n}\n", "function f(a)\n{\n    return a+1;\n}\n"),
    "formatting_tree": ("function f(a) {\n  return (a + 1);\n}\n", "function f(a) {\n  return a + 1\n}\n"),
    "defensive": (
        "function f(a) {\n  return a.x + 1;\n}\n",
        "function f(a) {\n  if (typeof a !== 'object') { return null; }\n  return a.x + 1;\n}\n",
    ),
    "defensive_null": (
        "function f(a) {\n  return a.x + 1;\n}\n",
        "function f(a) {\n  if (a == null) {\n    throw new Error('a');\n  }\n  return a.x + 1;\n}\n",
    ),
    "lazy_placeholder": (
        "function f(a) {\n  const b = a * 2;\n  return b + 1;\n}\n",
        "function f(a) {\n  // ... rest of the code\n  return b + 1;\n}\n",
    ),
    "import_change": (
        "import x from 'x';\nfunction f(a) {\n  return a + 1;\n}\n",
        "import x from 'x';\nimport y from 'y';\nfunction f(a) {\n  return a + 1;\n}\n",
    ),
    "signature_change": ("function f(a) {\n  return a + 1;\n}\n", "function f(a, b) {\n  return a + 1;\n}\n"),
    "deletion": (
        "function f(a) {\n  return a + 1;\n}\nfunction g(b) {\n  return b;\n}\n",
        "function f(a) {\n  return a + 1;\n}\n",
    ),
    "outside_target": (
        "function f(a) {\n  return a + 1;\n}\nfunction g(b) {\n  return b;\n}\n",
        "function f(a) {\n  return a + 2;\n}\nfunction g(b) {\n  return b * 1;\n}\n",
        (1, 3),
    ),
    "logic": ("function f(a) {\n  return a + 1;\n}\n", "function f(a) {\n  return a + 2;\n}\n"),
}
P["typescript"] = {
    "rename_local": (
        "function f(a: number): number {\n  const total = a + 1;\n  return total;\n}\n",
        "function f(a: number): number {\n  const sum = a + 1;\n  return sum;\n}\n",
    ),
    "rename_param": (
        "function f(items: string[]): number {\n  return items.length;\n}\n",
        "function f(list: string[]): number {\n  return list.length;\n}\n",
    ),
    "rename_function": (
        "function size(x: string[]): number {\n  return x.length;\n}\nsize([]);\n",
        "function length(x: string[]): number {\n  return x.length;\n}\nlength([]);\n",
    ),
    "comment_removed": (
        "function f(a: number): number {\n  // add one\n  return a + 1;\n}\n",
        "function f(a: number): number {\n  return a + 1;\n}\n",
    ),
    "doc_comment_removed": (
        "/** Adds one. */\nfunction f(a: number): number {\n  return a + 1;\n}\n",
        "function f(a: number): number {\n  return a + 1;\n}\n",
    ),
    "formatting_only": (
        "function f(a: number): number {\n  return a + 1;\n}\n",
        "function f(a:number):number {\n    return a+1;\n}\n",
    ),
    "formatting_tree": (
        "function f(a: number): string {\n  return 'x' + a;\n}\n",
        'function f(a: number): string {\n  return "x" + a;\n}\n',
    ),
    "defensive": (
        "function f(a: Foo): number {\n  return a.x;\n}\n",
        "function f(a: Foo): number {\n  if (!(a instanceof Foo)) {\n    throw new TypeError('a');\n  }\n  return a.x;\n}\n",
    ),
    "defensive_null": (
        "function f(a: Foo | undefined): number {\n  return a!.x;\n}\n",
        "function f(a: Foo | undefined): number {\n  if (a === undefined) {\n    return 0;\n  }\n  return a!.x;\n}\n",
    ),
    "lazy_placeholder": (
        "function f(a: number): number {\n  const b = a * 2;\n  return b + 1;\n}\n",
        "function f(a: number): number {\n  // ... existing code ...\n  return b + 1;\n}\n",
    ),
    "import_change": (
        "import { x } from './x';\nfunction f(a: number): number {\n  return a + 1;\n}\n",
        "import { x, y } from './x';\nfunction f(a: number): number {\n  return a + 1;\n}\n",
    ),
    "signature_change": (
        "function f(a: number): number {\n  return a + 1;\n}\n",
        "function f(a: number, b?: number): number {\n  return a + 1;\n}\n",
    ),
    "deletion": (
        "function f(a: number): number {\n  return a + 1;\n}\nfunction g(b: number): number {\n  return b;\n}\n",
        "function f(a: number): number {\n  return a + 1;\n}\n",
    ),
    "outside_target": (
        "function f(a: number): number {\n  return a + 1;\n}\nfunction g(b: number): number {\n  return b;\n}\n",
        "function f(a: number): number {\n  return a + 2;\n}\nfunction g(b: number): number {\n  return b * 1;\n}\n",
        (1, 3),
    ),
    "logic": (
        "function f(a: number): number {\n  return a + 1;\n}\n",
        "function f(a: number): number {\n  return a - 1;\n}\n",
    ),
}
P["java"] = {
    "rename_local": (
        "class A {\n  int f(int a) {\n    int total = a + 1;\n    return total;\n  }\n}\n",
        "class A {\n  int f(int a) {\n    int sum = a + 1;\n    return sum;\n  }\n}\n",
    ),
    "rename_param": (
        "class A {\n  int f(int[] items) {\n    return items.length;\n  }\n}\n",
        "class A {\n  int f(int[] list) {\n    return list.length;\n  }\n}\n",
    ),
    "rename_function": (
        "class A {\n  int size(int[] x) {\n    return x.length;\n  }\n  int g() {\n    return size(new int[0]);\n  }\n}\n",
        "class A {\n  int length(int[] x) {\n    return x.length;\n  }\n  int g() {\n    return length(new int[0]);\n  }\n}\n",
    ),
    "comment_removed": (
        "class A {\n  int f(int a) {\n    // add one\n    return a + 1;\n  }\n}\n",
        "class A {\n  int f(int a) {\n    return a + 1;\n  }\n}\n",
    ),
    "doc_comment_removed": (
        "class A {\n  /** Adds one. */\n  int f(int a) {\n    return a + 1;\n  }\n}\n",
        "class A {\n  int f(int a) {\n    return a + 1;\n  }\n}\n",
    ),
    "formatting_only": (
        "class A {\n  int f(int a) {\n    return a + 1;\n  }\n}\n",
        "class A {\n  int f(int a)\n  {\n      return a+1;\n  }\n}\n",
    ),
    "formatting_tree": (
        "class A {\n  int f(int a) {\n    return (a + 1);\n  }\n}\n",
        "class A {\n  int f(int a) {\n    return a + 1;\n  }\n}\n",
    ),
    "defensive": (
        "class A {\n  int f(String s) {\n    return s.length();\n  }\n}\n",
        "class A {\n  int f(String s) {\n    Objects.requireNonNull(s);\n    return s.length();\n  }\n}\n",
    ),
    "defensive_null": (
        "class A {\n  int f(String s) {\n    return s.length();\n  }\n}\n",
        'class A {\n  int f(String s) {\n    if (s == null) {\n      throw new IllegalArgumentException("s");\n    }\n    return s.length();\n  }\n}\n',
    ),
    "lazy_placeholder": (
        "class A {\n  int f(int a) {\n    int b = a * 2;\n    return b + 1;\n  }\n}\n",
        "class A {\n  int f(int a) {\n    // ... rest of the method\n    return b + 1;\n  }\n}\n",
    ),
    "import_change": (
        "import java.util.List;\nclass A {\n  int f(int a) {\n    return a + 1;\n  }\n}\n",
        "import java.util.List;\nimport java.util.Map;\nclass A {\n  int f(int a) {\n    return a + 1;\n  }\n}\n",
    ),
    "signature_change": (
        "class A {\n  int f(int a) {\n    return a + 1;\n  }\n}\n",
        "class A {\n  long f(int a, int b) {\n    return a + 1;\n  }\n}\n",
    ),
    "deletion": (
        "class A {\n  int f(int a) {\n    return a + 1;\n  }\n  int g(int b) {\n    return b;\n  }\n}\n",
        "class A {\n  int f(int a) {\n    return a + 1;\n  }\n}\n",
    ),
    "outside_target": (
        "class A {\n  int f(int a) {\n    return a + 1;\n  }\n  int g(int b) {\n    return b;\n  }\n}\n",
        "class A {\n  int f(int a) {\n    return a + 2;\n  }\n  int g(int b) {\n    return b * 1;\n  }\n}\n",
        (2, 4),
    ),
    "logic": (
        "class A {\n  int f(int a) {\n    return a + 1;\n  }\n}\n",
        "class A {\n  int f(int a) {\n    return a + 2;\n  }\n}\n",
    ),
}
P["c"] = {
    "rename_local": (
        "int f(int a) {\n  int total = a + 1;\n  return total;\n}\n",
        "int f(int a) {\n  int sum = a + 1;\n  return sum;\n}\n",
    ),
    "rename_param": (
        "int f(const char *s) {\n  return strlen(s);\n}\n",
        "int f(const char *str) {\n  return strlen(str);\n}\n",
    ),
    "rename_function": (
        "int size(int x) {\n  return x * 2;\n}\nint g(void) {\n  return size(1);\n}\n",
        "int twice(int x) {\n  return x * 2;\n}\nint g(void) {\n  return twice(1);\n}\n",
    ),
    "comment_removed": (
        "int f(int a) {\n  /* add one */\n  return a + 1;\n}\n",
        "int f(int a) {\n  return a + 1;\n}\n",
    ),
    "doc_comment_removed": (
        "/** Adds one. */\nint f(int a) {\n  return a + 1;\n}\n",
        "int f(int a) {\n  return a + 1;\n}\n",
    ),
    "formatting_only": ("int f(int a) {\n  return a + 1;\n}\n", "int f(int a)\n{\n    return a+1;\n}\n"),
    "formatting_tree": ("int f(int a) {\n  return (a + 1);\n}\n", "int f(int a) {\n  return a + 1;\n}\n"),
    "defensive": (
        "int f(const char *s) {\n  return strlen(s);\n}\n",
        "int f(const char *s) {\n  if (s == NULL) {\n    return -1;\n  }\n  return strlen(s);\n}\n",
    ),
    "defensive_null": ("int f(int *p) {\n  return *p;\n}\n", "int f(int *p) {\n  if (!p) return 0;\n  return *p;\n}\n"),
    "lazy_placeholder": (
        "int f(int a) {\n  int b = a * 2;\n  return b + 1;\n}\n",
        "int f(int a) {\n  /* ... rest of the code ... */\n  return b + 1;\n}\n",
    ),
    "import_change": (
        "#include <stdio.h>\nint f(int a) {\n  return a + 1;\n}\n",
        "#include <stdio.h>\n#include <stdlib.h>\nint f(int a) {\n  return a + 1;\n}\n",
    ),
    "signature_change": ("int f(int a) {\n  return a + 1;\n}\n", "long f(int a, int b) {\n  return a + 1;\n}\n"),
    "deletion": (
        "int f(int a) {\n  return a + 1;\n}\nint g(int b) {\n  return b;\n}\n",
        "int f(int a) {\n  return a + 1;\n}\n",
    ),
    "outside_target": (
        "int f(int a) {\n  return a + 1;\n}\nint g(int b) {\n  return b;\n}\n",
        "int f(int a) {\n  return a + 2;\n}\nint g(int b) {\n  return b * 1;\n}\n",
        (1, 3),
    ),
    "logic": ("int f(int a) {\n  return a + 1;\n}\n", "int f(int a) {\n  return a + 2;\n}\n"),
}
P["cpp"] = {
    "rename_local": (
        "int f(int a) {\n  auto total = a + 1;\n  return total;\n}\n",
        "int f(int a) {\n  auto sum = a + 1;\n  return sum;\n}\n",
    ),
    "rename_param": (
        "int f(const std::vector<int>& items) {\n  return items.size();\n}\n",
        "int f(const std::vector<int>& xs) {\n  return xs.size();\n}\n",
    ),
    "rename_function": (
        "int size(int x) {\n  return x * 2;\n}\nint g() {\n  return size(1);\n}\n",
        "int twice(int x) {\n  return x * 2;\n}\nint g() {\n  return twice(1);\n}\n",
    ),
    "comment_removed": ("int f(int a) {\n  // add one\n  return a + 1;\n}\n", "int f(int a) {\n  return a + 1;\n}\n"),
    "doc_comment_removed": (
        "/// Adds one.\nint f(int a) {\n  return a + 1;\n}\n",
        "int f(int a) {\n  return a + 1;\n}\n",
    ),
    "formatting_only": ("int f(int a) {\n  return a + 1;\n}\n", "int f(int a)\n{\n    return a+1;\n}\n"),
    "formatting_tree": ("int f(int a) {\n  return (a + 1);\n}\n", "int f(int a) {\n  return a + 1;\n}\n"),
    "defensive": (
        "int f(Node* n) {\n  return n->value;\n}\n",
        'int f(Node* n) {\n  if (n == nullptr) {\n    throw std::invalid_argument("n");\n  }\n  return n->value;\n}\n',
    ),
    "defensive_null": (
        "int f(Node* n) {\n  return n->value;\n}\n",
        "int f(Node* n) {\n  try {\n    return n->value;\n  } catch (...) {\n    return 0;\n  }\n}\n",
    ),
    "lazy_placeholder": (
        "int f(int a) {\n  int b = a * 2;\n  return b + 1;\n}\n",
        "int f(int a) {\n  // ... rest of the code\n  return b + 1;\n}\n",
    ),
    "import_change": (
        "#include <vector>\nint f(int a) {\n  return a + 1;\n}\n",
        "#include <vector>\n#include <map>\nint f(int a) {\n  return a + 1;\n}\n",
    ),
    "signature_change": ("int f(int a) {\n  return a + 1;\n}\n", "int f(int a) const {\n  return a + 1;\n}\n"),
    "deletion": (
        "int f(int a) {\n  return a + 1;\n}\nint g(int b) {\n  return b;\n}\n",
        "int f(int a) {\n  return a + 1;\n}\n",
    ),
    "outside_target": (
        "int f(int a) {\n  return a + 1;\n}\nint g(int b) {\n  return b;\n}\n",
        "int f(int a) {\n  return a + 2;\n}\nint g(int b) {\n  return b * 1;\n}\n",
        (1, 3),
    ),
    "logic": ("int f(int a) {\n  return a + 1;\n}\n", "int f(int a) {\n  return a + 2;\n}\n"),
}
P["go"] = {
    "rename_local": (
        "func f(a int) int {\n\ttotal := a + 1\n\treturn total\n}\n",
        "func f(a int) int {\n\tsum := a + 1\n\treturn sum\n}\n",
    ),
    "rename_param": (
        "func f(items []int) int {\n\treturn len(items)\n}\n",
        "func f(xs []int) int {\n\treturn len(xs)\n}\n",
    ),
    "rename_function": (
        "func size(x int) int {\n\treturn x * 2\n}\n\nfunc g() int {\n\treturn size(1)\n}\n",
        "func twice(x int) int {\n\treturn x * 2\n}\n\nfunc g() int {\n\treturn twice(1)\n}\n",
    ),
    "comment_removed": (
        "func f(a int) int {\n\t// add one\n\treturn a + 1\n}\n",
        "func f(a int) int {\n\treturn a + 1\n}\n",
    ),
    "doc_comment_removed": (
        "// f adds one.\nfunc f(a int) int {\n\treturn a + 1\n}\n",
        "func f(a int) int {\n\treturn a + 1\n}\n",
    ),
    "formatting_only": ("func f(a int) int {\n\treturn a + 1\n}\n", "func f(a int) int {\n    return a+1\n}\n"),
    "formatting_tree": ("func f(a int) int {\n\treturn (a + 1)\n}\n", "func f(a int) int {\n\treturn a + 1\n}\n"),
    "defensive": (
        "func f(p *T) int {\n\treturn p.v\n}\n",
        "func f(p *T) int {\n\tif p == nil {\n\t\treturn 0\n\t}\n\treturn p.v\n}\n",
    ),
    "defensive_null": (
        "func f(s string) int {\n\tn, _ := strconv.Atoi(s)\n\treturn n\n}\n",
        "func f(s string) int {\n\tn, err := strconv.Atoi(s)\n\tif err != nil {\n\t\treturn 0\n\t}\n\treturn n\n}\n",
    ),
    "lazy_placeholder": (
        "func f(a int) int {\n\tb := a * 2\n\treturn b + 1\n}\n",
        "func f(a int) int {\n\t// ... rest of the code\n\treturn b + 1\n}\n",
    ),
    "import_change": (
        'package p\n\nimport "fmt"\n\nfunc f(a int) int {\n\treturn a + 1\n}\n',
        'package p\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc f(a int) int {\n\treturn a + 1\n}\n',
    ),
    "signature_change": ("func f(a int) int {\n\treturn a + 1\n}\n", "func f(a int, b int) int {\n\treturn a + 1\n}\n"),
    "deletion": (
        "func f(a int) int {\n\treturn a + 1\n}\n\nfunc g(b int) int {\n\treturn b\n}\n",
        "func f(a int) int {\n\treturn a + 1\n}\n",
    ),
    "outside_target": (
        "func f(a int) int {\n\treturn a + 1\n}\n\nfunc g(b int) int {\n\treturn b\n}\n",
        "func f(a int) int {\n\treturn a + 2\n}\n\nfunc g(b int) int {\n\treturn b * 1\n}\n",
        (1, 3),
    ),
    "logic": ("func f(a int) int {\n\treturn a + 1\n}\n", "func f(a int) int {\n\treturn a + 2\n}\n"),
}
P["rust"] = {
    "rename_local": (
        "fn f(a: i32) -> i32 {\n    let total = a + 1;\n    total\n}\n",
        "fn f(a: i32) -> i32 {\n    let sum = a + 1;\n    sum\n}\n",
    ),
    "rename_param": (
        "fn f(items: &[i32]) -> usize {\n    items.len()\n}\n",
        "fn f(xs: &[i32]) -> usize {\n    xs.len()\n}\n",
    ),
    "rename_function": (
        "fn size(x: i32) -> i32 {\n    x * 2\n}\n\nfn g() -> i32 {\n    size(1)\n}\n",
        "fn twice(x: i32) -> i32 {\n    x * 2\n}\n\nfn g() -> i32 {\n    twice(1)\n}\n",
    ),
    "comment_removed": (
        "fn f(a: i32) -> i32 {\n    // add one\n    a + 1\n}\n",
        "fn f(a: i32) -> i32 {\n    a + 1\n}\n",
    ),
    "doc_comment_removed": (
        "/// Adds one.\nfn f(a: i32) -> i32 {\n    a + 1\n}\n",
        "fn f(a: i32) -> i32 {\n    a + 1\n}\n",
    ),
    "formatting_only": ("fn f(a: i32) -> i32 {\n    a + 1\n}\n", "fn f(a: i32) -> i32\n{\n  a+1\n}\n"),
    "formatting_tree": ("fn f(a: i32) -> i32 {\n    (a + 1)\n}\n", "fn f(a: i32) -> i32 {\n    a + 1\n}\n"),
    "defensive": (
        "fn f(s: &str) -> i32 {\n    s.parse::<i32>().unwrap()\n}\n",
        "fn f(s: &str) -> i32 {\n    match s.parse::<i32>() {\n        Ok(v) => v,\n        Err(_) => 0,\n    }\n}\n",
    ),
    "defensive_null": (
        "fn f(v: &[i32]) -> i32 {\n    v[0]\n}\n",
        "fn f(v: &[i32]) -> i32 {\n    if v.is_empty() {\n        return 0;\n    }\n    v[0]\n}\n",
    ),
    "lazy_placeholder": (
        "fn f(a: i32) -> i32 {\n    let b = a * 2;\n    b + 1\n}\n",
        "fn f(a: i32) -> i32 {\n    // ... rest of the code\n    b + 1\n}\n",
    ),
    "import_change": (
        "use std::io;\n\nfn f(a: i32) -> i32 {\n    a + 1\n}\n",
        "use std::io;\nuse std::fs;\n\nfn f(a: i32) -> i32 {\n    a + 1\n}\n",
    ),
    "signature_change": ("fn f(a: i32) -> i32 {\n    a + 1\n}\n", "fn f(a: i32, b: i32) -> i32 {\n    a + 1\n}\n"),
    "deletion": (
        "fn f(a: i32) -> i32 {\n    a + 1\n}\n\nfn g(b: i32) -> i32 {\n    b\n}\n",
        "fn f(a: i32) -> i32 {\n    a + 1\n}\n",
    ),
    "outside_target": (
        "fn f(a: i32) -> i32 {\n    a + 1\n}\n\nfn g(b: i32) -> i32 {\n    b\n}\n",
        "fn f(a: i32) -> i32 {\n    a + 2\n}\n\nfn g(b: i32) -> i32 {\n    b * 1\n}\n",
        (1, 3),
    ),
    "logic": ("fn f(a: i32) -> i32 {\n    a + 1\n}\n", "fn f(a: i32) -> i32 {\n    a + 2\n}\n"),
}
# the one kind each case is about; a few cases show a second, named in EXTRA
KIND = {
    "rename_local": "rename",
    "rename_param": "rename",
    "rename_function": "rename",
    "comment_removed": "comment_removed",
    "doc_comment_removed": "docstring",  # a doc comment is a docstring
    "formatting_only": "formatting_only",
    "formatting_tree": "formatting_only",
    "defensive": "defensive",
    "defensive_null": "defensive",
    "lazy_placeholder": "lazy_placeholder",
    "import_change": "import_change",
    "signature_change": "signature_change",
    "deletion": "deletion",
    "outside_target": "outside_target",
    "logic": "logic",
}
EXTRA = {
    ("*", "outside_target"): {"logic"},  # both edits change logic; the one in `g` is outside lines of `f`
    ("go", "defensive_null"): {"rename"},  # `n, _ :=` -> `n, err :=`: the blank identifier named
}
CASES = [(lang, case) for lang in P for case in P[lang]]


@pytest.mark.parametrize(("lang", "case"), CASES, ids=[f"{lang}-{case}" for lang, case in CASES])
def test_kind(lang: str, case: str) -> None:
    original, edited, *target = P[lang][case]
    rng = range(target[0][0], target[0][1] + 1) if target else None
    report = measure(original, edited, language=lang, target=rng)
    assert report.language == lang
    assert report.parse_errors.original is None and report.parse_errors.edited is None
    kinds = {k for h in report.hunks for k in h.kinds}
    expected = {KIND[case]} | EXTRA.get((lang, case), EXTRA.get(("*", case), set()))
    assert kinds == expected, [(h.kinds, h.message) for h in report.hunks]
    # the units rebuild the edited text
    from server.fidelity.text.textedits import apply_text_edits

    assert apply_text_edits(original, report.edits) == edited


def test_every_language_has_every_kind() -> None:
    assert {lang: set(cases) for lang, cases in P.items()} == {lang: set(KIND) for lang in P}


@pytest.mark.parametrize(
    ("lang", "old", "new", "kind"),
    [
        ("c", "char f(void) {\n  return 'a';\n}\n", 'char *f(void) {\n  return "a";\n}\n', "signature_change"),
        (
            "c",
            "int f(void) {\n  return g('a');\n}\n",
            'int f(void) {\n  return g("a");\n}\n',
            "logic",
        ),  # char != string
        (
            "java",
            "class A {\n  char f() {\n    return 'a';\n  }\n}\n",
            'class A {\n  char f() {\n    return "a";\n  }\n}\n',
            "logic",
        ),
        ("javascript", "const s = 'a';\n", 'const s = "a";\n', "formatting_only"),  # quotes mean nothing in JS
        (
            "rust",
            "fn f(a: i32) -> i32 {\n    a + 1\n}\n",
            "fn f(a: i32) -> i32 {\n    a + 1;\n}\n",
            "logic",
        ),  # `;` matters
        (
            "go",
            "func f(a int) int {\n\treturn a + 1\n}\n",
            "func f(a int) int {\n\treturn a + 1;\n}\n",
            "formatting_only",
        ),
    ],
)
def test_language_specific_meaning(lang: str, old: str, new: str, kind: str) -> None:
    report = measure(old, new, language=lang)
    assert kind in {k for h in report.hunks for k in h.kinds}, [(h.kinds, h.message) for h in report.hunks]
    if kind != "formatting_only":
        assert "formatting_only" not in {k for h in report.hunks for k in h.kinds}


@pytest.mark.parametrize(
    ("lang", "old", "new"),
    [
        (
            "javascript",
            "function f(a) {\n  const b = a * 2;\n  return b + 1;\n}\n",
            "function f(a) {\n  // rest of the code unchanged\n  return b + 1;\n}\n",
        ),
        (
            "c",
            "int f(int a) {\n  int b = a * 2;\n  return b + 1;\n}\n",
            "int f(int a) {\n  /* remaining code omitted for brevity */\n  return b + 1;\n}\n",
        ),
        (
            "rust",
            "fn f(a: i32) -> i32 {\n    let b = a * 2;\n    b + 1\n}\n",
            "fn f(a: i32) -> i32 {\n    // existing code\n    b + 1\n}\n",
        ),
    ],
)
def test_placeholders_without_an_ellipsis(lang: str, old: str, new: str) -> None:
    assert [h.kinds for h in measure(old, new, language=lang).hunks] == [["lazy_placeholder"]]
