//! Decimal numbers in text (SFEN runs and counts, record move numbers and
//! times): ASCII digits only, read with checked arithmetic so that a long
//! digit run is refused instead of wrapping around.

/// The value of `digits` if it is one or more ASCII digits and at most
/// `max`; `None` otherwise (a sign, a space, an empty text, too large).
pub(crate) fn decimal_at_most(digits: &str, max: u64) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.bytes().try_fold(0u64, |n, b| {
        let digit = b.is_ascii_digit().then(|| u64::from(b - b'0'))?;
        n.checked_mul(10)?.checked_add(digit).filter(|&n| n <= max)
    })
}

/// The length of the run of ASCII digits at the start of `text`.
pub(crate) fn digit_run(text: &str) -> usize {
    text.bytes().take_while(u8::is_ascii_digit).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_within_the_bound_only() {
        assert_eq!(decimal_at_most("15", 15), Some(15));
        assert_eq!(decimal_at_most("0", 15), Some(0));
        assert_eq!(decimal_at_most("007", 15), Some(7));
        assert_eq!(decimal_at_most("16", 15), None);
        assert_eq!(decimal_at_most("18446744073709551615", u64::MAX), Some(u64::MAX));
        assert_eq!(decimal_at_most("18446744073709551616", u64::MAX), None, "one past u64::MAX");
        assert_eq!(decimal_at_most("18446744073709551625", 9), None, "wraps to 9 without checks");
        for bad in ["", "+5", "-1", " 5", "5 ", "1e3", "NaN", "inf", "５"] {
            assert_eq!(decimal_at_most(bad, u64::MAX), None, "{bad}");
        }
        assert_eq!(digit_run("12ab3"), 2);
        assert_eq!(digit_run("x"), 0);
    }
}
