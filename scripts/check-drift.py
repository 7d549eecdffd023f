#!/usr/bin/env python3
"""Checks that the prose still matches the code.

1. Rust paths. Every `lib::a::b` path in README.md, */README.md, docs/**/*.md, data/*.md
   and configs/*.toml (code spans, plain text and comments alike) whose first segment is a
   workspace crate's name (its lib target's name, or the name its dependents give it, as
   `model` for koma-model's `koma_model`) must resolve in that crate's sources: each further
   segment a module (`name.rs`, `name/mod.rs`, an inline `mod name {`), an item defined
   there (fn, struct, enum, trait, const, static, type, union, mod, macro_rules), or a name
   that module re-exports (`pub use`, globs included, across crates); after an item, the
   segments left (methods, variants, fields, associated items) must be defined in the
   item's crate. Visibility is not checked. Paths of other crates (`std::`, `tch::`) and
   binaries (`koma` has no lib) are not checked.
2. The crate table. README.md's table whose header has the columns `folder` and `crate`
   must list every workspace member once, in the README's order: each crate depends only
   on crates above it (the first row depends on no workspace crate). A normal or build
   dependency among the workspace's members (`cargo metadata`) on a crate listed below is
   a failure; dev-dependencies (tests) are not counted.

Prints one line a failure (file:line for the paths) and exits 1 if any.

Usage: scripts/check-drift.py [--self-test]   (run from anywhere; needs cargo on PATH)
"""

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from rust_use import split_use_group

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
ITEM_KINDS = r"(?:fn|struct|enum|trait|const|static|type|union|mod)"


def strip_comments(text):
    """Rust source with // and /* */ comments blanked (newlines kept); strings are left."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


class Crate:
    def __init__(self, name, package, root_file, deps):
        self.name = name  # lib target name
        self.package = package
        self.root = Path(root_file)
        self.src = self.root.parent
        self.deps = deps  # {alias used in this crate's code: package name}
        self._files = None

    def files(self):
        if self._files is None:
            self._files = sorted(self.src.rglob("*.rs"))
        return self._files


class Workspace:
    def __init__(self, root, metadata=None):
        self.root = Path(root)
        if metadata is None:
            metadata = json.loads(
                subprocess.run(
                    ["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"],
                    cwd=self.root,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )
        self.packages = {}  # package name -> Crate (None: no lib)
        self.manifest_dir = {}  # package name -> its folder
        self.deps = {}  # package name -> workspace packages it depends on (normal, build)
        names = {p["name"] for p in metadata["packages"]}
        for p in metadata["packages"]:
            lib = next((t for t in p["targets"] if set(t["kind"]) & {"lib", "rlib", "proc-macro"}), None)
            aliases = {}
            for d in p["dependencies"]:
                if d["name"] in names:
                    aliases[d.get("rename") or d["name"].replace("-", "_")] = d["name"]
            self.deps[p["name"]] = {
                d["name"] for d in p["dependencies"] if d["name"] in names and d.get("kind") in (None, "build")
            }
            self.manifest_dir[p["name"]] = Path(p["manifest_path"]).parent
            self.packages[p["name"]] = Crate(lib["name"], p["name"], lib["src_path"], aliases) if lib else None
        # The names a path may start with: lib names, and the names dependents use.
        self.alias = {}
        for pkg, crate in self.packages.items():
            if crate:
                self.alias[crate.name] = crate
                for a, dep in crate.deps.items():
                    if self.packages.get(dep):
                        self.alias.setdefault(a, self.packages[dep])
        self._text = {}

    def text(self, path):
        if path not in self._text:
            try:
                self._text[path] = strip_comments(Path(path).read_text(errors="replace"))
            except OSError:
                self._text[path] = ""
        return self._text[path]

    def crate_of(self, path):
        for crate in self.packages.values():
            if crate and crate.src in Path(path).parents:
                return crate
        return None

    # -- modules -----------------------------------------------------------------------

    @staticmethod
    def child_dir(mod_file):
        mod_file = Path(mod_file)
        if mod_file.name in ("lib.rs", "main.rs", "mod.rs"):
            return mod_file.parent
        return mod_file.parent / mod_file.stem

    @staticmethod
    def parent_module(crate, mod_file):
        mod_file = Path(mod_file)
        if mod_file == crate.root:
            return None
        d = mod_file.parent if mod_file.name != "mod.rs" else mod_file.parent.parent
        if d == crate.src:
            return crate.root
        for cand in (d.parent / (d.name + ".rs"), d / "mod.rs"):
            if cand.exists():
                return cand
        return None

    def pub_uses(self, mod_file):
        """(full path segments, name it is known by) of every `pub use` in the file."""
        out = []
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", self.text(mod_file)):
            out.extend(expand_use(re.sub(r"\s+", "", re.sub(r"\s+as\s+", "@", m.group(1)))))
        return out

    def find(self, crate, mod_file, name, depth=0):
        """What `name` is in module `mod_file` of `crate`: ("module", crate, file),
        ("item", crate, file) or None."""
        if depth > 12:
            return None
        d = self.child_dir(mod_file)
        for cand in (d / (name + ".rs"), d / name / "mod.rs"):
            if cand.exists():
                return ("module", crate, cand)
        text = self.text(mod_file)
        if re.search(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+" + name + r"\s*\{", text):
            return ("module", crate, mod_file)  # inline: its items are searched in the file
        definition = (
            r"(?m)(?:^|[{;}])\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+\"[^\"]*\")\s+)*"
            + ITEM_KINDS
            + r"\s+"
            + name
            + r"\b"
        )
        if re.search(definition, text) or re.search(r"macro_rules!\s*" + name + r"\b", text):
            return ("item", crate, mod_file)
        for path, known_as in self.pub_uses(mod_file):
            if path[-1] == "*":
                base = self.resolve_from(crate, mod_file, path[:-1], depth + 1)
                if base and base[0] == "module":
                    found = self.find(base[1], base[2], name, depth + 1)
                    if found:
                        return found
            elif known_as == name:
                target = self.resolve_from(crate, mod_file, path, depth + 1)
                return target or ("item", crate, mod_file)  # re-exported from outside
        return None

    def resolve_from(self, crate, mod_file, path, depth=0):
        """A `use` path as written in `mod_file`."""
        if not path:
            return ("module", crate, mod_file)
        first, rest = path[0], path[1:]
        if first == "crate":
            start = ("module", crate, crate.root)
        elif first == "self":
            start = ("module", crate, mod_file)
        elif first == "super":
            parent = self.parent_module(crate, mod_file)
            if parent is None:
                return None
            start = ("module", crate, parent)
        elif first in crate.deps and self.packages.get(crate.deps[first]):
            dep = self.packages[crate.deps[first]]
            start = ("module", dep, dep.root)
        else:
            found = self.find(crate, mod_file, first, depth + 1)
            if not found:
                return None
            start = found
        return self.walk(start, rest, depth)

    def walk(self, start, segments, depth=0):
        cur = start
        for i, seg in enumerate(segments):
            if seg in ("self",):
                continue
            if cur[0] == "item":
                return cur if all(self.defined_in_crate(cur[1], s) for s in segments[i:]) else None
            nxt = self.find(cur[1], cur[2], seg, depth + 1)
            if nxt is None:
                return None
            cur = nxt
        return cur

    def defined_in_crate(self, crate, name):
        """`name` as a method, associated item, enum variant or field anywhere in `crate`."""
        pattern = re.compile(
            r"(?m)(?:\b(?:fn|const|type|static|struct|enum|trait|mod)\s+" + name + r"\b"
            r"|(?:^|[{,])\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?" + name + r"\s*(?:[,({=:}]|$))"
        )
        return any(pattern.search(self.text(f)) for f in crate.files())

    def check_path(self, segments):
        """None if the path resolves, else the first segment that does not (and where)."""
        crate = self.alias[segments[0]]
        cur = ("module", crate, crate.root)
        for i, seg in enumerate(segments[1:], 1):
            if cur[0] == "item":
                for s in segments[i:]:
                    if not self.defined_in_crate(cur[1], s):
                        return f"no `{s}` defined in {cur[1].package} (after `{'::'.join(segments[:i])}`)"
                return None
            nxt = self.find(cur[1], cur[2], seg)
            if nxt is None:
                where = cur[2].relative_to(self.root) if self.root in cur[2].parents else cur[2]
                return f"no module or item `{seg}` in `{'::'.join(segments[:i])}` ({where})"
            cur = nxt
        return None


def expand_use(tree, prefix=()):
    """`a::{b,c::d@e,f::*}` (a use tree without spaces, `as` written `@`) -> [(["a","b"], "b"),
    (["a","c","d"], "e"), (["a","f","*"], "*")]."""
    out = []
    brace = tree.find("{")
    if brace < 0:
        alias = None
        if "@" in tree:
            tree, alias = tree.split("@", 1)
        segs = [s for s in tree.split("::") if s]
        if segs and segs[0] == "":
            segs = segs[1:]
        full = list(prefix) + segs
        if full and full[-1] == "self":
            full = full[:-1]
        if full:
            out.append((full, alias or full[-1]))
        return out
    head = [s for s in tree[:brace].split("::") if s]
    body = tree[brace + 1 : tree.rfind("}")]
    for p in split_use_group(body):
        if p:
            out.extend(expand_use(p, tuple(prefix) + tuple(head)))
    return out


def doc_files(root):
    files = [root / "README.md"]
    files += sorted(root.glob("*/README.md"))
    files += sorted((root / "docs").rglob("*.md"))
    files += sorted((root / "data").glob("*.md"))
    files += sorted((root / "configs").glob("*.toml"))
    seen, out = set(), []
    for f in files:
        if f.exists() and f not in seen:
            seen.add(f)
            out.append(f)
    return out


def check_paths(ws):
    names = sorted(ws.alias, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![A-Za-z0-9_:./-])(" + "|".join(map(re.escape, names)) + r")((?:::" + IDENT + r")+)"
    )
    failures, checked = [], 0
    for f in doc_files(ws.root):
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            for m in pattern.finditer(line):
                segments = [m.group(1)] + m.group(2).split("::")[1:]
                checked += 1
                why = ws.check_path(segments)
                if why:
                    failures.append(f"{f.relative_to(ws.root)}:{n}: `{'::'.join(segments)}`: {why}")
    return failures, checked


def crate_table(readme_text):
    """The (folder, crate) rows of the table whose header has `folder` and `crate`."""
    lines = readme_text.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip().lower() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and "folder" in cells and "crate" in cells:
            fi, ci = cells.index("folder"), cells.index("crate")
            rows = []
            for j in range(i + 2, len(lines)):
                if not lines[j].lstrip().startswith("|"):
                    break
                row = [c.strip() for c in lines[j].strip().strip("|").split("|")]
                folder = row[fi].strip("` /") if fi < len(row) else ""
                crate = re.findall(r"`([^`]+)`", row[ci])[0] if ci < len(row) and "`" in row[ci] else row[ci]
                rows.append((folder, crate, j + 1))
            return rows
    return None


def check_table(ws):
    readme = ws.root / "README.md"
    rows = crate_table(readme.read_text())
    if rows is None:
        return ["README.md: no table with the columns `folder` and `crate`"]
    failures = []
    by_dir = {d.resolve(): pkg for pkg, d in ws.manifest_dir.items()}
    order = []
    for folder, crate, line in rows:
        pkg = by_dir.get((ws.root / folder).resolve()) if folder else None
        pkg = pkg or (crate if crate in ws.deps else None)
        if pkg is None:
            failures.append(f"README.md:{line}: crate table: `{folder}/` ({crate}) is no workspace member")
            continue
        if pkg in order:
            failures.append(f"README.md:{line}: crate table: {pkg} listed twice")
            continue
        order.append(pkg)
    for pkg in sorted(set(ws.deps) - set(order)):
        rel = ws.manifest_dir[pkg].relative_to(ws.root) if ws.root in ws.manifest_dir[pkg].parents else ws.manifest_dir[pkg]
        failures.append(f"README.md: crate table: workspace member {pkg} (`{rel}/`) is not in it")
    line_of = {pkg: line for pkg, (_, _, line) in zip(order, [r for r in rows])}
    position = {pkg: i for i, pkg in enumerate(order)}
    for pkg in order:
        for dep in sorted(ws.deps[pkg]):
            if dep in position and position[dep] > position[pkg]:
                failures.append(
                    f"README.md:{line_of.get(pkg, '?')}: crate table: {pkg} depends on {dep}, listed below it"
                )
    return failures


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        def write(rel, text):
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
            return str(p)

        a = write("a/src/lib.rs", "pub mod inner;\nmod hidden { pub fn deep() {} }\npub use inner::Thing;\npub use b::*;\n"
                  "pub use inner::{other::Far as Near, Tuple};\n// pub fn commented() {}\n")
        write("a/src/inner/mod.rs", "pub mod other;\npub struct Thing { pub field: u8 }\nimpl Thing { pub fn go(&self) {} }\n"
              "pub enum Tuple { One(u8), Two }\n")
        write("a/src/inner/other.rs", "pub(crate) const FAR: u8 = 1;\npub struct Far;\n")
        b = write("b/src/lib.rs", "pub fn from_b() {}\npub mod bmod { pub fn x() {} }\n")
        write("README.md", "| folder | crate | what |\n|---|---|---|\n| `a/` | `pa` (lib `a`) | x |\n| `b/` | `pb` | y |\n"
              "`a::inner::Thing::go`, `a::Thing`, `a::inner::other::FAR`, `a::Near`, `a::Tuple::Two`, `a::from_b`,\n"
              "`b::bmod::x`, `a::bmod`, `a::inner::Thing::field`, `std::fs::nope`, `a::hidden::deep`\n"
              "`a::missing`, `a::inner::Nope`, `a::Thing::gone`, `b::commented`, `a::commented`\n")
        meta = {
            "packages": [
                {"name": "pa", "manifest_path": str(root / "a/Cargo.toml"),
                 "targets": [{"name": "a", "kind": ["lib"], "src_path": a}],
                 "dependencies": [{"name": "pb", "rename": "b", "kind": None}]},
                {"name": "pb", "manifest_path": str(root / "b/Cargo.toml"),
                 "targets": [{"name": "b", "kind": ["lib"], "src_path": b}], "dependencies": []},
            ]
        }
        ws = Workspace(root, meta)
        failures, checked = check_paths(ws)
        bad = sorted(re.search(r"`([^`]+)`", f).group(1) for f in failures)
        expected = ["a::Thing::gone", "a::commented", "a::inner::Nope", "a::missing", "b::commented"]
        assert checked == 15, checked
        assert bad == expected, (bad, failures)
        table = check_table(ws)
        assert len(table) == 1 and "pa depends on pb, listed below it" in table[0], table
        meta["packages"][0], meta["packages"][1] = meta["packages"][1], meta["packages"][0]
        write("README.md", "| folder | crate |\n|---|---|\n| `b/` | `pb` |\n| `a/` | `pa` |\n")
        assert check_table(Workspace(root, meta)) == []
        write("README.md", "| folder | crate |\n|---|---|\n| `a/` | `pa` |\n| `c/` | `pc` |\n")
        table = check_table(Workspace(root, meta))
        assert any("no workspace member" in f for f in table) and any("pb" in f and "not in it" in f for f in table), table
    assert expand_use("a::{b,c::{d,e@f},g::*,self}") == [
        (["a", "b"], "b"), (["a", "c", "d"], "d"), (["a", "c", "e"], "f"), (["a", "g", "*"], "*"), (["a"], "a")
    ], expand_use("a::{b,c::{d,e@f},g::*,self}")
    print("check-drift: self-test passed")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    root = Path(__file__).resolve().parent.parent
    ws = Workspace(root)
    path_failures, checked = check_paths(ws)
    table_failures = check_table(ws)
    for f in path_failures + table_failures:
        print(f)
    total = len(path_failures) + len(table_failures)
    print(
        f"check-drift: {checked} Rust paths in the docs and configs, {len(path_failures)} not in the code; "
        f"crate table: {len(table_failures)} problems",
        file=sys.stderr,
    )
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
