#!/usr/bin/env bash
# Tests the engine folders that scripts/package-engine.sh writes, as a user who downloads
# one would use them: each is unpacked into a temporary folder and run from there with the
# checkout's .venv (libtorch) out of reach; the Windows one under Wine.
#
# For each folder: the USI handshake, `isready` loading the network beside the binary on
# the CPU backend, a 10-game `koma arena` match against the greedy player at 200 nodes a
# move (every move checked by the arena's rules), `go mate` on ten problems of
# data/tsume/reference.tsv, an XBoard game of dai shogi, and bad input (a missing network,
# a broken SFEN) answered with an error line and no crash.
#
# Usage: scripts/test-engine-folder.sh [--linux-only] [--no-package]
#   --linux-only  skip the Windows folder (no Wine or mingw-w64 here)
#   --no-package  test the folders already in dist/
# The arena is the checkout's `koma` (target/release, built with libtorch): only the
# engine under test comes from the folder.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"

linux_only=0
package=1
for arg in "$@"; do
    case "$arg" in
        --linux-only) linux_only=1 ;;
        --no-package) package=0 ;;
        *) echo "test-engine-folder: unknown argument '$arg'" >&2; exit 2 ;;
    esac
done

# shellcheck source=scripts/windows/wine-env.sh
source scripts/windows/wine-env.sh
if [[ $linux_only -eq 0 ]] && ! koma_wine_ready; then
    echo "test-engine-folder: the Windows folder needs the tools above (scripts/setup-windows.sh installs them)" >&2
    exit 1
fi

version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
if [[ $package -eq 1 ]]; then
    if [[ $linux_only -eq 1 ]]; then scripts/package-engine.sh --linux-only; else scripts/package-engine.sh; fi
fi
arena="$root/target/release/koma"
[[ -x "$arena" && -x "$root/target/release/koma-net" ]] || cargo build --release -p koma -p koma-net

work="$(mktemp -d "${TMPDIR:-/tmp}/koma-engine-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "test-engine-folder: FAIL ($1): $2" >&2; exit 1; }
pass() { echo "test-engine-folder: ok ($1): $2" >&2; }

# Runs the engine of folder $2 with the USI commands on stdin; $1 is the platform.
engine() {
    local platform="$1" dir="$2"
    shift 2
    if [[ "$platform" == windows ]]; then
        (cd "$dir" && koma_wine ./koma-usi.exe "$@")
    else
        (cd "$dir" && env -u LD_LIBRARY_PATH -u KOMA_MODEL PATH=/usr/bin:/bin ./koma-usi "$@")
    fi
}

check_folder() {
    local platform="$1" dir="$2" cmd out
    if [[ "$platform" == windows ]]; then
        scripts/windows/build-shim.sh "$dir" >/dev/null
        cmd="$root/scripts/windows/run-wine.sh $dir/koma-usi.exe"
    else
        if ldd "$dir/koma-usi" | grep -qi torch; then fail "$platform" "koma-usi links libtorch"; fi
        cmd="env -u LD_LIBRARY_PATH -u KOMA_MODEL PATH=/usr/bin:/bin $dir/koma-usi"
    fi

    out="$(printf 'usi\nisready\nquit\n' | engine "$platform" "$dir")"
    grep -q '^usiok' <<<"$out" || fail "$platform" "no usiok: $out"
    grep -q '^option name Backend type combo default auto' <<<"$out" || fail "$platform" "no Backend option"
    grep -q '^readyok' <<<"$out" || fail "$platform" "no readyok: $out"
    grep -q 'info string network: .*model-shogi.safetensors.* on cpu' <<<"$out" ||
        fail "$platform" "isready did not load the network beside the engine on the CPU backend: $out"
    pass "$platform" "handshake, network beside the engine: $(grep -o 'network: .*' <<<"$out" | head -1)"

    out="$(printf 'usi\nsetoption name ModelFile value nowhere/missing.safetensors\nisready\nposition sfen not/a/position b - 1\nposition startpos moves 7g7f 9z9z\nusi\nquit\n' |
        engine "$platform" "$dir")"
    grep -q 'info string error.*missing.safetensors' <<<"$out" || fail "$platform" "a missing network got no error line: $out"
    grep -q '^readyok' <<<"$out" || fail "$platform" "no readyok after a missing network"
    [[ "$(grep -c 'info string error' <<<"$out")" -ge 3 ]] || fail "$platform" "a broken SFEN or move got no error line: $out"
    [[ "$(grep -c '^usiok' <<<"$out")" -eq 2 ]] || fail "$platform" "the engine did not answer after bad input: $out"
    pass "$platform" "bad input answered with error lines"

    local mates=0 n=0 sfen verdict
    while IFS=$'\t' read -r sfen verdict _; do
        out="$(printf 'usi\nisready\nposition sfen %s\ngo mate 10000\nquit\n' "$sfen" | engine "$platform" "$dir")"
        if [[ "$verdict" == mate ]] && grep -q '^checkmate [^n]' <<<"$out"; then mates=$((mates + 1)); fi
        n=$((n + 1))
    done < <(grep -v '^#' data/tsume/reference.tsv | awk -F'\t' '$2 == "mate"' | head -10)
    [[ $mates -eq 10 ]] || fail "$platform" "go mate solved $mates of $n"
    pass "$platform" "go mate: $mates of $n problems"

    local games="$work/$platform-arena"
    "$arena" arena --player "koma=usi:$cmd" --player greedy=greedy --games 10 --tc nodes=200 \
        --concurrency 1 --out "$games" >"$work/$platform-arena.log" 2>&1 || {
        cat "$work/$platform-arena.log" >&2
        fail "$platform" "koma arena failed"
    }
    check_games "$platform" "$games" 10 "shogi against greedy"

    games="$work/$platform-dai"
    "$arena" arena --variant dai --player "koma=xboard:$cmd --xboard,NodesLimit=32" --player greedy=greedy \
        --games 2 --max-plies 300 --tc byoyomi=5000 --concurrency 1 --out "$games" >"$work/$platform-dai.log" 2>&1 || {
        cat "$work/$platform-dai.log" >&2
        fail "$platform" "koma arena (dai, XBoard) failed"
    }
    check_games "$platform" "$games" 2 "dai over XBoard against greedy"
}

# Every game of the match in $2 ended by the rules, a resignation or adjudication: no
# illegal move, crash, hang, time loss or protocol error.
check_games() {
    local platform="$1" games="$2/games.jsonl" want="$3" what="$4" n bad
    n="$(wc -l <"$games")"
    [[ "$n" -eq "$want" ]] || fail "$platform" "$what: $n games of $want"
    bad="$(grep -cE '"reason":"(illegal_move|false_declaration|false_claim|time|hang|crash|protocol_error|stopped)"' "$games" || true)"
    [[ "$bad" -eq 0 ]] || fail "$platform" "$what: $bad games ended badly: $(grep -E '"reason":"(illegal|crash|hang|time|protocol)' "$games" | head -2)"
    pass "$platform" "$what: $n games, every move legal ($(tail -1 "$2/../$(basename "$2").log" 2>/dev/null || true))"
}

tar -C "$work" -xzf "dist/koma-engine-$version-linux-x86_64.tar.gz"
check_folder linux "$work/koma-engine-$version-linux-x86_64"
if [[ $linux_only -eq 0 ]]; then
    python3 -m zipfile -e "dist/koma-engine-$version-windows-x86_64.zip" "$work"
    check_folder windows "$work/koma-engine-$version-windows-x86_64"
fi
echo "test-engine-folder: all passed" >&2
