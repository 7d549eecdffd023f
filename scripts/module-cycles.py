#!/usr/bin/env python3
"""Lists pairs of modules of one crate that import each other.

For every workspace member (Cargo.toml's `members`) and each of its crate roots (src/lib.rs,
src/main.rs, src/bin/*.rs, and the [lib] and [[bin]] paths of its Cargo.toml), the module tree is read from the `mod name;` declarations
(inline `mod name { ... }` blocks, such as test modules, count as part of their file's
module). In code (comments and strings stripped) every `crate::...`, `super::...` and
`self::...` path, in `use` trees and in expressions alike, is resolved to the deepest module
it names; a name that a module re-exports (`pub use a::b::Name`) resolves to the module that
defines it. A reference from module A to module B is counted between the two children of
their nearest common ancestor (so `crate::x::y` used in `z::w` makes `z` depend on `x`);
a module and its own ancestors are not a pair. Two siblings that depend on each other are a
pair: printed one a line with one example reference each way.

Usage: scripts/module-cycles.py [workspace root]   (exit 1 if any pair is found)
       scripts/module-cycles.py --self-test        (checks this script on a made-up crate)
"""

import re
import sys
from pathlib import Path

from rust_use import split_use_group

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None


def members(root):
    text = (root / "Cargo.toml").read_text()
    if tomllib:
        return tomllib.loads(text)["workspace"]["members"]
    block = re.search(r"members\s*=\s*\[(.*?)\]", text, re.S).group(1)
    return re.findall(r'"([^"]+)"', block)


def strip_code(text):
    """Comments, string and char literals blanked (newlines kept), so paths and braces are code."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r(#*)"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + len(hashes) + 2)
            j = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                out.append("' '")
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use_tree(tree):
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"] (aliases and globs dropped)."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", tree))
    brace = tree.find("{")
    if brace < 0:
        return [re.sub(r"::self$", "", tree)]
    prefix, inner = tree[:brace], tree[brace + 1:tree.rfind("}")]
    result = []
    for part in filter(None, split_use_group(inner)):
        for sub in expand_use_tree(part):
            result.append((prefix + sub).rstrip(":"))
    return result


class Module:
    def __init__(self, path, file, is_dir_owner):
        self.path = path  # tuple of names below the crate root
        self.file = file
        self.is_dir_owner = is_dir_owner  # lib.rs, main.rs, mod.rs: children live beside it
        self.code = strip_code(file.read_text())
        self.reexports = {}  # name -> absolute path (tuple)
        self.refs = []  # (absolute path tuple, line)


MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)
USE_STMT = re.compile(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")
PATH_EXPR = re.compile(r"(?<![\w:])((?:crate|super|self)(?:\s*::\s*\w+)+)")
INLINE_MOD = re.compile(r"\bmod\s+(\w+)\s*\{")


def load_tree(root_file):
    modules = {}

    def visit(path, file, owner):
        module = Module(path, file, owner)
        modules[path] = module
        folder = file.parent if owner else file.parent / file.stem
        for name in MOD_DECL.findall(module.code):
            for candidate, child_owner in ((folder / f"{name}.rs", False), (folder / name / "mod.rs", True)):
                if candidate.exists():
                    visit(path + (name,), candidate, child_owner)
                    break

    visit((), root_file, True)
    return modules


def inline_scope(code, pos):
    """Names of the inline `mod x {` blocks that enclose position pos."""
    stack, depth = [], 0
    opens = {m.end() - 1: m.group(1) for m in INLINE_MOD.finditer(code, 0, pos)}
    for k in range(pos):
        ch = code[k]
        if ch == "{":
            depth += 1
            if k in opens:
                stack.append((opens[k], depth))
        elif ch == "}":
            if stack and stack[-1][1] == depth:
                stack.pop()
            depth -= 1
    return [name for name, _ in stack]


def absolute(module, raw, pos, modules):
    segs = [s for s in re.split(r"\s*::\s*", raw.strip()) if s]
    if not segs:
        return None
    base = list(module.path) + inline_scope(module.code, pos)
    if segs[0] not in ("crate", "super", "self"):
        # A `use` path may start at a child module (`pub use config::NetConfig` in lib.rs).
        if module.path + (segs[0],) not in modules:
            return None
        segs = ["self"] + segs
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    while segs and segs[0] in ("super", "self"):
        if segs[0] == "super":
            if not base:
                return None
            base = base[:-1]
        segs = segs[1:]
    # References inside an inline module are charged to the file's module.
    return tuple(base + segs)


def resolve(modules, path, seen=0):
    """The deepest module a path names, following re-exports."""
    best = ()
    for k in range(len(path), -1, -1):
        if path[:k] in modules:
            best = path[:k]
            break
    rest = path[len(best):]
    if rest and seen < 8:
        target = modules[best].reexports.get(rest[0])
        if target is not None and target[: len(best) + 1] != best + (rest[0],):
            return resolve(modules, target + rest[1:], seen + 1)
    return best


def line_of(code, pos):
    return code.count("\n", 0, pos) + 1


def crate_pairs(name, root_file):
    modules = load_tree(root_file)
    for module in modules.values():
        code = module.code
        use_spans = []
        for m in USE_STMT.finditer(code):
            use_spans.append((m.start(), m.end()))
            for item in expand_use_tree(m.group(2)):
                target = absolute(module, item, m.start(), modules)
                if target is None:
                    continue
                module.refs.append((target, line_of(code, m.start())))
                if m.group(1) and target and target[-1] != "*":
                    module.reexports[target[-1]] = target
        for m in PATH_EXPR.finditer(code):
            if any(a <= m.start() < b for a, b in use_spans):
                continue
            target = absolute(module, m.group(1), m.start(), modules)
            if target is not None:
                module.refs.append((target, line_of(code, m.start())))

    depends = {}  # (from sibling, to sibling) -> example
    for module in modules.values():
        for target, line in module.refs:
            to = resolve(modules, target)
            here = module.path
            k = 0
            while k < len(here) and k < len(to) and here[k] == to[k]:
                k += 1
            if k == len(here) or k == len(to):
                continue  # the same module, or one is the other's ancestor
            a, b = here[: k + 1], to[: k + 1]
            where = f"{module.file}:{line}"
            depends.setdefault((a, b), where)
    pairs = []
    for (a, b), where in sorted(depends.items()):
        if a < b and (b, a) in depends:
            pairs.append((a, b, where, depends[(b, a)]))
    return pairs


SELF_TEST = {
    "Cargo.toml": '[workspace]\nmembers = ["a"]\n',
    "a/src/lib.rs": "mod d;\nmod x;\nmod y;\nmod z;\npub use z::Z;\n",
    # x -> y in a use tree; y -> x in an expression path: a pair.
    "a/src/x.rs": "use crate::{y::Y, d};\npub struct X;\n// crate::z::Z in a comment is no import\n",
    "a/src/y.rs": 'pub struct Y;\nfn f() -> crate::x::X { let _ = "crate::z"; crate::x::X }\nfn g(_: crate::Z) {}\n',
    # z -> y, and y -> z through the crate root's re-export `crate::Z`: a pair.
    "a/src/z.rs": "pub struct Z;\n#[cfg(test)]\nmod tests {\n    use super::super::y::Y;\n}\n",
    # Siblings inside a folder module, `super::` one way and `crate::d::` the other: a pair;
    # a child using its parent is not.
    "a/src/d/mod.rs": "mod p;\nmod q;\npub struct D;\n",
    "a/src/d/p.rs": "use super::q::Q;\nuse super::D;\npub struct P;\n",
    "a/src/d/q.rs": "pub struct Q;\nfn f(_: crate::d::p::P) {}\n",
}
SELF_TEST_PAIRS = [("", "x", "y"), ("", "y", "z"), ("d", "p", "q")]


def self_test():
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, text in SELF_TEST.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        found = sorted(
            ("::".join(a[:-1]), a[-1], b[-1]) for a, b, _, _ in crate_pairs("a", root / "a/src/lib.rs")
        )
    if found != SELF_TEST_PAIRS:
        print(f"self-test: found {found}, expected {SELF_TEST_PAIRS}", file=sys.stderr)
        return 1
    print("self-test: ok")
    return 0


def crate_roots(package):
    """The package's crate roots: src/lib.rs, src/main.rs, src/bin/*.rs and the paths its
    Cargo.toml gives to [lib] and [[bin]] targets."""
    src = package / "src"
    roots = [src / "lib.rs", src / "main.rs"] + sorted((src / "bin").glob("*.rs"))
    manifest = (package / "Cargo.toml").read_text()
    if tomllib:
        data = tomllib.loads(manifest)
        targets = [data.get("lib", {})] + data.get("bin", [])
        roots += [package / t["path"] for t in targets if "path" in t]
    else:
        roots += [package / p for p in re.findall(r'^path\s*=\s*"([^"]+)"', manifest, re.M)]
    unique = []
    for r in roots:
        if r.exists() and r.resolve() not in [u.resolve() for u in unique]:
            unique.append(r)
    return unique


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    found = 0
    for member in members(root):
        for root_file in crate_roots(root / member):
            if not root_file.exists():
                continue
            for a, b, ab, ba in crate_pairs(member, root_file):
                found += 1
                rel = lambda p: str(Path(p).relative_to(root)).rsplit(":", 1)[0] + ":" + p.rsplit(":", 1)[1]
                print(f"{member} ({root_file.name}): {'::'.join(a)} <-> {'::'.join(b)}   ({rel(ab)}; {rel(ba)})")
    if found:
        print(f"{found} pair(s) of modules import each other", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
