//! `--notation usi|xboard` and the sho/dai game ends of `koma perft`,
//! `koma moves` and `koma outcome`.

mod common;

use common::{koma, stdout};

/// Dai: sente K 8o, P 1o; gote k 8a, p 1a, r 8m (sente's king en prise).
const DAI_HANGING: &str = "7k6p/15/15/15/15/15/15/15/15/15/15/15/7r7/15/7K6P b - 1";

#[test]
fn moves_in_xboard_notation_match_hachu_at_the_start() {
    let data = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../data/moves/moves-dai.tsv")).unwrap();
    let first = data.lines().next().unwrap();
    let o = koma(&["moves", "--variant", "dai", "--notation", "xboard"], "startpos\n");
    assert!(o.status.success());
    assert_eq!(stdout(&o).trim_end(), first);
    // Moves given as flags, in XBoard notation; output in the same notation.
    let o = koma(&["moves", "--variant", "dai", "--notation", "xboard", "--moves", "g5g6", "g11g10"], "");
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.split_whitespace().any(|m| m == "g6g7"), "{out}");
    // The same position in USI.
    let o = koma(&["moves", "--variant", "dai", "--moves", "9k9j", "9e9f"], "");
    assert!(stdout(&o).split_whitespace().any(|m| m == "9j9i"));
}

#[test]
fn perft_divides_in_the_chosen_notation() {
    let o = koma(&["perft", "--variant", "dai", "--depth", "1", "--divide", "--notation", "xboard"], "");
    let out = stdout(&o);
    assert!(out.lines().any(|l| l == "h3j2 1"), "{out}");
    assert_eq!(out.lines().last(), Some("nodes 71"));
    let o = koma(&["perft", "--variant", "sho", "--depth", "2", "--notation", "xboard", "--moves", "c3c4"], "");
    let usi = koma(&["perft", "--variant", "sho", "--depth", "2", "--moves", "7g7f"], "");
    assert!(o.status.success());
    assert_eq!(stdout(&o), stdout(&usi));
}

#[test]
fn outcome_reads_xboard_moves_and_startpos_lines() {
    let input = format!(
        "startpos moves g5g6 g11g10\n\
         startpos\tg5g6 g11g10\n\
         {DAI_HANGING}\to1o2 h3h1\n\
         {DAI_HANGING}\to1o2 h3h2\n\
         startpos moves g5g6 g5g6\n"
    );
    let o = koma(&["outcome", "--variant", "dai", "--notation", "xboard"], &input);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        stdout(&o),
        "none ongoing\nnone ongoing\ngote royal_capture\nnone ongoing\nerror illegal_move g5g6 ply 2\n"
    );
}

#[test]
fn outcome_reports_royal_capture_and_bare_king_for_sho_and_dai() {
    // Dai in USI: the king is taken (no check rule), or the last other piece.
    let input = format!("{DAI_HANGING}\t1o1n 8m8o\n{DAI_HANGING}\t1o1n\n");
    let o = koma(&["outcome", "--variant", "dai"], &input);
    assert_eq!(stdout(&o), "gote royal_capture\nnone ongoing\n");
    let input = "7k6p/15/15/15/15/15/15/15/15/15/15/15/15/14g/7K6P w - 1\t1n1o+\n";
    let o = koma(&["outcome", "--variant", "dai"], input);
    assert_eq!(stdout(&o), "gote bare_king\n");
    // Sho: bare king, in either notation.
    let o = koma(
        &["outcome", "--variant", "sho"],
        "4k4/9/9/9/9/9/9/4r4/4K4 b - 1\t\n4k3r/9/9/9/9/9/8P/9/4K4 w - 1\t1a1g\n",
    );
    assert_eq!(stdout(&o), "gote bare_king\ngote bare_king\n");
    let o = koma(&["outcome", "--variant", "sho", "--notation", "xboard"], "4k3r/9/9/9/9/9/8P/9/4K4 w - 1\ti9i3\n");
    assert_eq!(stdout(&o), "gote bare_king\n");
}

#[test]
fn unknown_notation_is_bad_input() {
    let o = koma(&["moves", "--notation", "csa"], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown notation"));
}
