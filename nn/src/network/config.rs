//! Network architecture settings: the `[net]` section of a koma config file.

use serde::{Deserialize, Serialize};

/// Architecture of the residual network. Every field has a default (`#[serde(default)]`),
/// so a config file only names what it changes, and unknown fields are rejected.
///
/// The network (see [`crate::Net`]):
/// - stem: conv 3x3 (`channels`) - batch norm - ReLU;
/// - `blocks` residual blocks: conv 3x3 - BN - ReLU - conv 3x3 - BN - add input - ReLU;
///   every `global_pooling_every`-th block is a KataGo-style global pooling block;
/// - policy head: conv 3x3 (`policy_channels`) - BN - ReLU - conv 1x1 with bias to
///   `policy_planes` planes, flattened to logits (AlphaZero's shogi/chess policy head);
/// - value head: conv 1x1 (`value_channels`) - BN - ReLU - fully connected
///   (`value_hidden`) - ReLU - fully connected to 3 win/draw/loss logits (Leela Chess
///   Zero's WDL head);
/// - optional auxiliary heads that only training reads (KataGo's auxiliary targets; Wu
///   2019, "Accelerating Self-Play Learning in Go", 4.1): a second policy head
///   (`reply_policy_head`) and a final-material output of the value head
///   (`material_head`). Inference ([`crate::FusedNet`]) leaves them out.
///
/// Example (TOML):
/// ```toml
/// [net]
/// blocks = 10
/// channels = 128
/// global_pooling_every = 3
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetConfig {
    /// Residual blocks in the tower (not counting the stem). Default 10.
    /// AlphaZero: 19 (20 with the stem; 39 in the longer AlphaGo Zero run);
    /// KataGo: 6 to 40 (b18c384 in recent runs); dlshogi: 10, later 15 to 20.
    /// Valid: 0..=256.
    pub blocks: usize,

    /// Channels (filters) of the stem and of every block. Default 128.
    /// AlphaZero: 256; KataGo: 96 to 384; dlshogi: 192 (later 224 and 256).
    /// Valid: 1..=4096.
    pub channels: usize,

    /// Make every k-th block (blocks k-1, 2k-1, ... counting from 0) a global pooling block;
    /// 0 disables global pooling. Default 0.
    /// In such a block a second 3x3 convolution of the block input (`global_pooling_channels`
    /// channels, BN, ReLU) is reduced over the board to its mean and max, and a linear layer
    /// turns those into a per-channel bias added to the block's first convolution before its
    /// ReLU, which lets the tower see the whole board at once (KataGo, "Accelerating
    /// Self-Play Learning in Go", 2019; KataGo puts such blocks at a regular interval, about
    /// every third block). AlphaZero and dlshogi: none. Valid: 0..=256.
    pub global_pooling_every: usize,

    /// Channels pooled in a global pooling block. Default 32. KataGo: 32 for its small
    /// nets, 64 for b20c256 and larger. Valid: 1..=4096 (checked when pooling is on).
    pub global_pooling_channels: usize,

    /// Channels of the policy head's 3x3 convolution; `None` means `channels`.
    /// Default `None`. AlphaZero (chess/shogi): 256, same as the tower. Valid: 1..=4096.
    pub policy_channels: Option<usize>,

    /// Channels of the value head's 1x1 convolution. Default 32.
    /// AlphaZero: 1; Leela Chess Zero: 32; KataGo: 32 for small nets. Valid: 1..=4096.
    pub value_channels: usize,

    /// Hidden units of the value head's fully connected layer. Default 128.
    /// AlphaZero: 256; Leela Chess Zero: 128; dlshogi: 256. Valid: 1..=65536.
    pub value_hidden: usize,

    /// Initialise the last batch norm scale of every residual block to zero, so each block
    /// starts as the identity (Goyal et al. 2017; torchvision's `zero_init_residual`; KataGo
    /// similarly scales down its residual branches at init). Only affects fresh networks.
    /// Default true.
    pub zero_init_residual: bool,

    /// Input option: dlshogi's attack planes (per side, the squares each kind attacks and
    /// attacker counts; [`crate::encoding::EncoderOptions::attack_planes`]). They hand a
    /// small network what it would otherwise need many games to learn: which pieces hang.
    /// Default false. dlshogi: on; AlphaZero: off.
    pub attack_planes: bool,

    /// Training aid: a second policy head of the main one's shape (`reply_policy.*`)
    /// that predicts the opponent's reply, the policy target of the next position
    /// (`dataio::AuxTargets::reply_policy`), trained with weight
    /// `train.reply_policy_weight`. KataGo: this target made learning faster (Wu 2019,
    /// 4.1, weight 0.15). Search never reads it. Default false (and then absent from the
    /// files' `net`, which stay as before).
    #[serde(skip_serializing_if = "is_false")]
    pub reply_policy_head: bool,

    /// Training aid: a scalar output of the value head (`material.fc`, from the value
    /// head's hidden layer, as KataGo's extra value outputs) that predicts the final
    /// position's material balance from the side to move's view, squashed as
    /// `tanh(material / 10)` (10: a rook), trained with weight `train.material_head_weight`.
    /// Search never reads it. Default false (and then absent from the files' `net`).
    #[serde(skip_serializing_if = "is_false")]
    pub material_head: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            blocks: 10,
            channels: 128,
            global_pooling_every: 0,
            global_pooling_channels: 32,
            policy_channels: None,
            value_channels: 32,
            value_hidden: 128,
            zero_init_residual: true,
            attack_planes: false,
            reply_policy_head: false,
            material_head: false,
        }
    }
}

impl NetConfig {
    /// The smallest network: one residual block of 8 channels, a value head of 2 channels
    /// and 8 hidden units. Tests and smoke runs use it: it evaluates in microseconds on a
    /// CPU and learns little.
    pub fn tiny() -> Self {
        NetConfig { blocks: 1, channels: 8, value_channels: 2, value_hidden: 8, ..NetConfig::default() }
    }
}

/// A config value the program refuses; the message names the field (`table.field`), the
/// value and what is valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{field} = {value} is out of range (valid: {range})")]
    OutOfRange { field: String, value: String, range: String },
    #[error("{field} = \"{value}\" is not valid (expected {expected})")]
    BadValue { field: String, value: String, expected: String },
}

/// The valid range of a real-valued config field (as documented on the field). NaN and
/// the infinities are in no range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// `[min, max]`.
    Closed(f64, f64),
    /// `(min, max]`.
    AboveMin(f64, f64),
    /// `[min, max)`.
    BelowMax(f64, f64),
}

impl Range {
    /// Whether `v` is in the range. A closed end also takes a value within f32 rounding
    /// of it: an f32 field set to a bound (`0.01`, stored as 0.0099999998) is at the
    /// bound, not below it.
    pub fn contains(&self, v: f64) -> bool {
        let at = |bound: f64| (v - bound).abs() <= bound.abs() * f64::from(f32::EPSILON);
        let above = |lo: f64| lo <= v || at(lo);
        let below = |hi: f64| v <= hi || at(hi);
        v.is_finite()
            && match *self {
                Range::Closed(lo, hi) => above(lo) && below(hi),
                Range::AboveMin(lo, hi) => lo < v && below(hi),
                Range::BelowMax(lo, hi) => above(lo) && v < hi,
            }
    }
}

#[cfg(test)]
mod range_tests {
    use super::*;

    /// `search.policy_softmax_temperature = 0.01` (an f32) was refused as below [0.01, 100].
    #[test]
    fn an_f32_at_a_closed_bound_is_inside() {
        assert!(check_real("search.policy_softmax_temperature", 0.01f32, Range::Closed(0.01, 100.0)).is_ok());
        assert!(check_real("x", 0.1f32, Range::BelowMax(0.1, 1.0)).is_ok());
        assert!(check_real("x", 0.3f32, Range::AboveMin(0.0, 0.3)).is_ok());
        for (v, r) in [
            (0.0099f32, Range::Closed(0.01, 100.0)),
            (0.0, Range::AboveMin(0.0, 1.0)),
            (1.0, Range::BelowMax(0.0, 1.0)),
        ] {
            assert!(check_real("x", v, r).is_err(), "{v} {r}");
        }
        assert!(check_real("x", f32::NAN, Range::Closed(0.0, 1.0)).is_err());
    }
}

impl std::fmt::Display for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Range::Closed(lo, hi) => write!(f, "[{lo}, {hi}]"),
            Range::AboveMin(lo, hi) => write!(f, "({lo}, {hi}]"),
            Range::BelowMax(lo, hi) => write!(f, "[{lo}, {hi})"),
        }
    }
}

/// Checks a real-valued field (`field` is `table.name`).
pub fn check_real<T: Into<f64> + std::fmt::Display + Copy>(
    field: &str,
    value: T,
    range: Range,
) -> Result<(), ConfigError> {
    if range.contains(value.into()) {
        return Ok(());
    }
    Err(ConfigError::OutOfRange { field: field.to_string(), value: value.to_string(), range: range.to_string() })
}

/// Checks a whole-number field against `min..=max`.
pub fn check_whole(field: &str, value: u64, min: u64, max: u64) -> Result<(), ConfigError> {
    if (min..=max).contains(&value) {
        return Ok(());
    }
    Err(ConfigError::OutOfRange { field: field.to_string(), value: value.to_string(), range: format!("{min}..={max}") })
}

/// Checks the spelling of a torch device name (`cpu`, `auto`, `cuda`, `gpu`, `cuda:N`, as
/// [`crate::parse_device`] reads it) without asking whether that device exists.
pub fn check_device_name(field: &str, name: &str) -> Result<(), ConfigError> {
    let lower = name.trim().to_ascii_lowercase();
    let ok = matches!(lower.as_str(), "cpu" | "auto" | "cuda" | "gpu")
        || lower.strip_prefix("cuda:").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if ok {
        return Ok(());
    }
    Err(ConfigError::BadValue {
        field: field.to_string(),
        value: name.to_string(),
        expected: "cpu, auto, cuda, gpu or cuda:N".into(),
    })
}

impl NetConfig {
    /// Checks the ranges of every field (documented on each field).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let check = |field: &str, value: usize, min: u64, max: u64| {
            check_whole(&format!("model.{field}"), value as u64, min, max)
        };
        check("blocks", self.blocks, 0, 256)?;
        check("channels", self.channels, 1, 4096)?;
        check("global_pooling_every", self.global_pooling_every, 0, 256)?;
        if self.global_pooling_every > 0 {
            check("global_pooling_channels", self.global_pooling_channels, 1, 4096)?;
        }
        if let Some(p) = self.policy_channels {
            check("policy_channels", p, 1, 4096)?;
        }
        check("value_channels", self.value_channels, 1, 4096)?;
        check("value_hidden", self.value_hidden, 1, 65536)?;
        Ok(())
    }

    /// Channels of the policy head's hidden convolution.
    pub fn policy_channels(&self) -> usize {
        self.policy_channels.unwrap_or(self.channels)
    }

    /// Whether block `i` (0-based) is a global pooling block.
    pub fn is_global_pooling_block(&self, i: usize) -> bool {
        self.global_pooling_every > 0 && (i + 1) % self.global_pooling_every == 0
    }
}
