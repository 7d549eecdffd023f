//! `koma perft`, `koma moves` and `koma outcome` driven as other tools
//! drive them: exact output formats, stdin modes and exit statuses.

mod common;

use common::{koma, stdout};

#[test]
fn perft_prints_nodes_last_and_divides_by_root_move() {
    let o = koma(&["perft", "--depth", "3"], "");
    assert!(o.status.success());
    assert_eq!(stdout(&o).lines().last(), Some("nodes 25470"));

    let o = koma(&["perft", "--depth", "2", "--divide", "--moves", "7g7f", "3c3d"], "");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let total: u64 =
        lines[..lines.len() - 1].iter().map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(lines.last().unwrap(), &format!("nodes {total}"));
    assert!(lines.iter().any(|l| l.starts_with("8h2b+ ")), "{out}");
    let mut sorted = lines[..lines.len() - 1].to_vec();
    sorted.sort();
    assert_eq!(sorted, lines[..lines.len() - 1]);
}

#[test]
fn moves_prints_one_sorted_line() {
    let o = koma(&["moves", "--sfen", "4k4/8P/9/9/9/9/9/9/K8 b G 1"], "");
    assert!(o.status.success());
    let out = stdout(&o);
    let moves: Vec<&str> = out.trim_end().split(' ').collect();
    let mut sorted = moves.clone();
    sorted.sort();
    assert_eq!(moves, sorted);
    assert!(moves.contains(&"G*1c") && moves.contains(&"1b1a+") && !moves.contains(&"1b1a"), "{out}");
}

#[test]
fn moves_reads_position_commands_from_stdin_and_reports_bad_lines() {
    let input = "startpos\nstartpos moves 7g7f 3c3d\nsfen 4k4/9/9/9/9/9/9/9/4K4 b - 1 moves 5i5h\nnot a position\n4k4/9/9/9/9/9/9/9/4K4 w - 1\n";
    let o = koma(&["moves"], input);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[0].starts_with("startpos\t1g1f "));
    assert!(lines[1].starts_with("startpos moves 7g7f 3c3d\t"));
    assert!(lines[1].contains("8h2b+"));
    assert_eq!(lines[2], "sfen 4k4/9/9/9/9/9/9/9/4K4 b - 1 moves 5i5h\t5a4a 5a4b 5a5b 5a6a 5a6b");
    assert!(lines[3].starts_with("error line 4"), "{}", lines[3]);
    assert!(lines[4].starts_with("4k4/9/9/9/9/9/9/9/4K4 w - 1\t"));
}

#[test]
fn outcome_answers_each_line_and_goes_on_after_bad_ones() {
    let start = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
    let input = format!(
        "{start}\t7g7f 3c3d\n{start}\t7g7f 7g7f\n{start}\t2g2f 8c8d 2f2e 8d8e 6i7h 4a3b 2e2d 2c2d 2h2d P*2c 2d2c+\nbroken sfen\t7g7f\n4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b RB 1\twin\n4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b R 1\twin\n{start}\t\n"
    );
    let o = koma(&["outcome"], &input);
    assert_eq!(o.status.code(), Some(2), "the broken line makes the exit status 2");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "none ongoing");
    assert_eq!(lines[1], "error illegal_move 7g7f ply 2");
    assert_eq!(lines[2], "none ongoing");
    assert!(lines[3].starts_with("error line 4"), "{}", lines[3]);
    assert_eq!(lines[4], "sente declaration");
    assert_eq!(lines[5], "error illegal_move win ply 1");
    assert_eq!(lines[6], "none ongoing");
}

#[test]
fn outcome_matches_the_reference_endings() {
    let data =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../data/moves/endings-shogi.tsv")).unwrap();
    let input: String = data.lines().map(|l| l.rsplit_once('\t').unwrap().0.to_string() + "\n").collect();
    let o = koma(&["outcome"], &input);
    assert!(o.status.success());
    let expected: Vec<&str> = data.lines().map(|l| l.rsplit('\t').next().unwrap()).collect();
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), expected);
}

/// `--entering-king-rule` judges a `win` by its rule: 29 points win by the 27-point rule
/// and draw by the 24-point rule; there is no declaration without a rule; under the try
/// rule a king's step onto 5a wins.
#[test]
fn outcome_judges_declarations_and_tries_by_the_entering_king_rule() {
    let camp29 = "sfen 4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b RB 1 moves win\n";
    let try_line = "sfen 9/4K4/9/9/9/9/9/9/k8 b - 1 moves 5b5a\n";
    let input = format!("{camp29}{try_line}");
    for (rule, want) in [
        (None, "sente declaration\nnone ongoing\n"),
        (Some("CSARule27"), "sente declaration\nnone ongoing\n"),
        (Some("CSARule24"), "draw declaration\nnone ongoing\n"),
        (Some("NoEnteringKing"), "error illegal_move win ply 1\nnone ongoing\n"),
        (Some("TryRule"), "error illegal_move win ply 1\nsente declaration\n"),
    ] {
        let args: Vec<&str> = match rule {
            Some(r) => vec!["outcome", "--entering-king-rule", r],
            None => vec!["outcome"],
        };
        let o = koma(&args, &input);
        assert_eq!(stdout(&o), want, "{rule:?}");
    }
}

#[test]
fn bad_input_exits_2_with_a_message_naming_the_problem() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["perft", "--depth", "2", "--sfen", "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNX b - 1"],
            "unknown piece 'X'",
        ),
        (&["perft", "--depth", "2", "--moves", "7g7e"], "7g7e"),
        (&["perft", "--depth", "2", "--variant", "chess"], "unknown variant"),
        (&["perft", "--depth", "x"], "invalid value"),
        (&["moves", "--sfen", "4k4/9/9/9/9/9/9/9/4K4 b - 1", "--moves", "P*5e"], "not in hand"),
        (&["outcome", "--impasse", "30"], "--impasse must be 24 or 27"),
        (&["outcome", "--entering-king-rule", "CSARule25"], "unknown entering king rule 'CSARule25'"),
        (&["outcome", "--impasse", "24", "--entering-king-rule", "TryRule"], "not both"),
    ];
    for (args, needle) in cases {
        let o = koma(args, "");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
