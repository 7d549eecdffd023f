//! Input text quoted in an error message, cut short: an error about one bad token of
//! an 8 MB line must not print the 8 MB (on stderr, or to a GUI as an `info string`).

use std::fmt;

/// Characters of a quoted text shown before it is cut.
pub const EXCERPT_CHARS: usize = 40;

/// `text` as an error message quotes it: whole when it has at most `max` characters,
/// else its first `max` characters and `... (N bytes)`.
#[derive(Clone, Copy, Debug)]
pub struct Excerpt<'a> {
    text: &'a str,
    max: usize,
}

/// `text` cut to [`EXCERPT_CHARS`] characters for an error message.
///
/// ```
/// assert_eq!(rules::excerpt("7g7f").to_string(), "7g7f");
/// let long = "x".repeat(1000);
/// assert_eq!(rules::excerpt(&long).to_string(), format!("{}... (1000 bytes)", "x".repeat(40)));
/// ```
pub fn excerpt(text: &str) -> Excerpt<'_> {
    Excerpt { text, max: EXCERPT_CHARS }
}

impl<'a> Excerpt<'a> {
    /// `text` cut to `max` characters.
    pub fn with_max(text: &'a str, max: usize) -> Excerpt<'a> {
        Excerpt { text, max }
    }
}

impl fmt::Display for Excerpt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.text.char_indices().nth(self.max) {
            None => f.write_str(self.text),
            Some((cut, _)) => write!(f, "{}... ({} bytes)", &self.text[..cut], self.text.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_whole_and_long_text_is_cut_at_a_character() {
        assert_eq!(excerpt("").to_string(), "");
        let forty = "a".repeat(40);
        assert_eq!(excerpt(&forty).to_string(), forty);
        let japanese = "歩".repeat(41);
        assert_eq!(excerpt(&japanese).to_string(), format!("{}... (123 bytes)", "歩".repeat(40)));
        assert_eq!(Excerpt::with_max("abcdef", 3).to_string(), "abc... (6 bytes)");
    }
}
