//! Text encodings of record files. Japanese programs write KIF and KI2 in
//! Shift_JIS (Windows code page 932) or UTF-8; CSA is ASCII with names in
//! either. A file that says which (`#KIF version=2.0 encoding=UTF-8`, a
//! `.kifu` extension) is held to it; otherwise valid UTF-8 is taken as
//! UTF-8 and anything else must be valid Shift_JIS.

use super::{ErrorKind, RecordError};
use encoding_rs::SHIFT_JIS;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    Utf8,
    /// Shift_JIS as Windows writes it (cp932), which Japanese programs mean
    /// by "Shift_JIS".
    ShiftJis,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::ShiftJis => "Shift_JIS",
        }
    }

    pub fn from_name(name: &str) -> Option<Encoding> {
        match name.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "utf8" => Some(Encoding::Utf8),
            "shiftjis" | "sjis" | "cp932" | "windows31j" => Some(Encoding::ShiftJis),
            _ => None,
        }
    }
}

/// The encoding to write a record file in, by its extension, as Japanese programs
/// read them: `.kifu` and `.ki2u` are UTF-8, everything else KIF or KI2 (`.kif`, `.ki2`)
/// is Shift_JIS (cp932). (CSA and USI text is ASCII but for names, and is written as
/// UTF-8 whatever this says.)
pub fn written_encoding(extension: &str) -> Encoding {
    match extension.to_ascii_lowercase().as_str() {
        "kifu" | "ki2u" => Encoding::Utf8,
        _ => Encoding::ShiftJis,
    }
}

/// 1-based line of byte offset `at`.
fn line_of(bytes: &[u8], at: usize) -> usize {
    bytes[..at.min(bytes.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The encoding a `#KIF ... encoding=NAME` first line declares.
fn declared(bytes: &[u8]) -> Option<Encoding> {
    let first = bytes.split(|&b| b == b'\n').next()?;
    let first = std::str::from_utf8(first).ok()?;
    if !first.starts_with('#') {
        return None;
    }
    let at = first.find("encoding=")?;
    Encoding::from_name(first[at + "encoding=".len()..].trim())
}

/// Turns a file's bytes into text. `expected` is what the file promises
/// (from its extension); a declaration in the file itself wins. Returns the
/// text and the encoding it was in.
pub fn decode(bytes: &[u8], expected: Option<Encoding>) -> Result<(String, Encoding), RecordError> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(RecordError::new(
            ErrorKind::Encoding,
            Some(1),
            "",
            "UTF-16 text; records must be UTF-8 or Shift_JIS",
        ));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(bytes);
    let expected = declared(bytes).or(expected);
    match (std::str::from_utf8(bytes), expected) {
        (Ok(text), None | Some(Encoding::Utf8)) => Ok((text.to_string(), Encoding::Utf8)),
        (Err(e), Some(Encoding::Utf8)) => Err(RecordError::new(
            ErrorKind::Encoding,
            Some(line_of(bytes, e.valid_up_to())),
            "",
            "not valid UTF-8 (the file is marked as UTF-8; Shift_JIS text?)",
        )),
        (utf8, _) => {
            let (text, had_errors) = SHIFT_JIS.decode_without_bom_handling(bytes);
            if had_errors {
                let bad = text.find('\u{FFFD}').unwrap_or(0);
                let line = text[..bad].matches('\n').count() + 1;
                let detail = if expected == Some(Encoding::ShiftJis) {
                    "not valid Shift_JIS"
                } else {
                    "neither UTF-8 nor Shift_JIS"
                };
                return Err(RecordError::new(ErrorKind::Encoding, Some(line), "", detail));
            }
            // ASCII text reads the same either way; call it UTF-8 unless told.
            let encoding = if utf8.is_ok() && expected.is_none() { Encoding::Utf8 } else { Encoding::ShiftJis };
            Ok((text.into_owned(), encoding))
        }
    }
}

/// Turns text into bytes. Characters Shift_JIS lacks are an error naming
/// their line, never silently replaced.
pub fn encode(text: &str, encoding: Encoding) -> Result<Vec<u8>, RecordError> {
    match encoding {
        Encoding::Utf8 => Ok(text.as_bytes().to_vec()),
        Encoding::ShiftJis => {
            let (bytes, _, unmappable) = SHIFT_JIS.encode(text);
            if !unmappable {
                return Ok(bytes.into_owned());
            }
            for (i, line) in text.lines().enumerate() {
                if let Some(c) = line.chars().find(|c| SHIFT_JIS.encode(&c.to_string()).2) {
                    return Err(RecordError::new(
                        ErrorKind::Unencodable,
                        Some(i + 1),
                        line,
                        format!("'{c}' has no Shift_JIS code"),
                    ));
                }
            }
            Err(RecordError::new(ErrorKind::Unencodable, None, "", "text has no Shift_JIS form"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_jis_round_trips_and_is_detected() {
        let text = "先手：羽生善治\n▲７六歩\n";
        let sjis = encode(text, Encoding::ShiftJis).unwrap();
        assert_ne!(sjis, text.as_bytes());
        assert_eq!(decode(&sjis, None).unwrap(), (text.to_string(), Encoding::ShiftJis));
        assert_eq!(decode(text.as_bytes(), None).unwrap(), (text.to_string(), Encoding::Utf8));
    }

    #[test]
    fn wrong_encoding_names_the_line() {
        let mut bytes = "line one\nline two\n".as_bytes().to_vec();
        bytes.extend_from_slice(&encode("先手：x\n", Encoding::ShiftJis).unwrap());
        let err = decode(&bytes, Some(Encoding::Utf8)).unwrap_err();
        assert_eq!((err.kind, err.line), (ErrorKind::Encoding, Some(3)));
        let err = decode(b"ok\n\x81\x20bad\n", None).unwrap_err();
        assert_eq!((err.kind, err.line), (ErrorKind::Encoding, Some(2)));
        assert_eq!(encode("a\n😀\n", Encoding::ShiftJis).unwrap_err().line, Some(2));
    }

    #[test]
    fn kif_and_ki2_files_are_shift_jis_unless_their_name_says_utf8() {
        assert_eq!(written_encoding("kif"), Encoding::ShiftJis);
        assert_eq!(written_encoding("KI2"), Encoding::ShiftJis);
        assert_eq!(written_encoding("kifu"), Encoding::Utf8);
        assert_eq!(written_encoding("ki2u"), Encoding::Utf8);
    }

    #[test]
    fn a_declaration_in_the_file_wins() {
        let mut bytes = b"#KIF version=2.0 encoding=Shift_JIS\n".to_vec();
        bytes.extend_from_slice(&encode("手合割：平手\n", Encoding::ShiftJis).unwrap());
        assert_eq!(decode(&bytes, Some(Encoding::Utf8)).unwrap().1, Encoding::ShiftJis);
    }
}
