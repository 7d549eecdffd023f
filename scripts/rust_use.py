"""What the repository's Python checks share about Rust source: the top level of a `use` group."""


def split_use_group(inner):
    """The items of a `use` group's inside (`a, b::{c, d}, e`), split at its top-level commas."""
    depth, parts, start = 0, [], 0
    for k, ch in enumerate(inner):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(inner[start:k])
            start = k + 1
    parts.append(inner[start:])
    return parts
