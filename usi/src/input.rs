//! Command lines read as bytes: a GUI that sends one stray byte (invalid UTF-8) or an
//! endless line must cost it that one command, not the engine.

use std::io::{BufRead, ErrorKind};

/// Longest command line kept, in bytes (a dai shogi `position ... moves` of thousands of
/// plies is far below it); the rest of a longer line is read and dropped.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// One line of input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// A line of text, without its line ending.
    Text(String),
    /// A line that is not UTF-8: `text` shows it with the bad bytes replaced by U+FFFD.
    NotUtf8 { text: String },
    /// A line of `bytes` bytes, longer than [`MAX_LINE_BYTES`].
    TooLong { bytes: usize },
}

impl Line {
    /// What is wrong with the line, for an error message; `None` for a text line.
    pub fn problem(&self) -> Option<String> {
        match self {
            Line::Text(_) => None,
            Line::NotUtf8 { text } => Some(format!("line is not valid UTF-8, ignored: {}", shorten(text))),
            Line::TooLong { bytes } => {
                Some(format!("line of {bytes} bytes is longer than the limit of {MAX_LINE_BYTES}, ignored"))
            }
        }
    }
}

fn shorten(s: &str) -> String {
    const KEEP: usize = 80;
    match s.char_indices().nth(KEEP) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// Reads the next line; `None` at the end of the input or when reading fails for good.
pub fn read_line(input: &mut impl BufRead) -> Option<Line> {
    let mut kept: Vec<u8> = Vec::new();
    let mut total = 0usize;
    let mut any = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], Some(i + 1)),
            None => (chunk, None),
        };
        total += part.len();
        let room = MAX_LINE_BYTES.saturating_sub(kept.len());
        kept.extend_from_slice(&part[..part.len().min(room)]);
        let used = done.unwrap_or(chunk.len());
        input.consume(used);
        if done.is_some() {
            break;
        }
    }
    if !any {
        return None;
    }
    if total > MAX_LINE_BYTES {
        return Some(Line::TooLong { bytes: total });
    }
    if kept.last() == Some(&b'\r') {
        kept.pop();
    }
    Some(match String::from_utf8(kept) {
        Ok(s) => Line::Text(s),
        Err(e) => Line::NotUtf8 { text: String::from_utf8_lossy(e.as_bytes()).into_owned() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8]) -> Vec<Line> {
        let mut r = std::io::BufReader::with_capacity(7, bytes);
        std::iter::from_fn(|| read_line(&mut r)).collect()
    }

    #[test]
    fn bad_bytes_cost_one_line() {
        let got = lines(b"usi\n\xff\xfe go\r\nisready");
        assert_eq!(got[0], Line::Text("usi".into()));
        assert!(matches!(&got[1], Line::NotUtf8 { text } if text.ends_with(" go")), "{got:?}");
        assert_eq!(got[2], Line::Text("isready".into()));
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn endless_lines_are_dropped_whole() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\nquit\n");
        let got = lines(&input);
        assert_eq!(got, vec![Line::TooLong { bytes: MAX_LINE_BYTES + 10 }, Line::Text("quit".into())]);
        assert!(got[0].problem().unwrap().contains("longer than"));
    }
}
