def _efj_main(name):
    import ast as _ast, inspect as _inspect, json as _json, sys as _sys, textwrap as _textwrap
    owner = globals().get("Solution")
    fn = getattr(owner(), name) if isinstance(owner, type) and hasattr(owner, name) else globals()[name]
    lines = _sys.stdin.read().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    params = list(_inspect.signature(fn).parameters.values())

    def bad(why):
        print("edit-fidelity judge: bad test input: " + why, file=_sys.stderr)
        _sys.exit(3)

    def build(value, note):
        if "ListNode" in note and isinstance(value, list):
            head = None
            for v in reversed(value):
                head = ListNode(v, head)
            return head
        if "TreeNode" in note and isinstance(value, list):
            nodes = [None if v is None else TreeNode(v) for v in value]
            child = 1
            for node in nodes:
                if child >= len(nodes):
                    break
                if node is None:
                    continue
                node.left = nodes[child]
                child += 1
                if child < len(nodes):
                    node.right = nodes[child]
                    child += 1
            return nodes[0] if nodes else None
        return value

    args = []
    for i, line in enumerate(lines):
        try:
            value = _json.loads(line)
        except ValueError as exc:
            bad(f"{exc} in {line[:200]!r}")
        note = str(params[i].annotation) if i < len(params) else ""
        args.append(build(value, note))

    def plain(r, depth=0):
        kind = type(r).__name__
        if kind == "ListNode":
            out = []
            while r is not None and len(out) < 1000000:
                out.append(r.val)
                r = r.next
            return out
        if kind == "TreeNode":
            order = [r]
            k = 0
            while k < len(order) and len(order) < 2000000:
                if order[k] is not None:
                    order += [order[k].left, order[k].right]
                k += 1
            while order and order[-1] is None:
                order.pop()
            return [None if n is None else n.val for n in order]
        if isinstance(r, (list, tuple, deque)):
            return [plain(x, depth + 1) for x in r]
        if isinstance(r, (set, frozenset)):
            items = [plain(x, depth + 1) for x in r]
            try:
                return sorted(items)
            except TypeError:
                return items
        if isinstance(r, dict):
            return {str(k): plain(v, depth + 1) for k, v in r.items()}
        if r is None or isinstance(r, (bool, int, float, str)):
            return r
        return str(r)

    def returns_value(f):
        try:
            tree = _ast.parse(_textwrap.dedent(_inspect.getsource(f)))
        except (OSError, TypeError, SyntaxError):
            return True
        return any(isinstance(n, _ast.Return) and n.value is not None for n in _ast.walk(tree))

    result = fn(*args)
    if result is None and args and not returns_value(fn):
        result = args[0]
    if result is None and any(n in str(_inspect.signature(fn).return_annotation) for n in ("ListNode", "TreeNode")):
        result = []  # LeetCode shows an empty list or tree as []
    print(_json.dumps(plain(result), separators=(",", ":"), ensure_ascii=False))


_efj_main(ENTRY)
