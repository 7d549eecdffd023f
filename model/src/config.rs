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
///   Zero's WDL head).
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
    pub blocks: usize,

    /// Channels (filters) of the stem and of every block. Default 128.
    /// AlphaZero: 256; KataGo: 96 to 384; dlshogi: 192 (later 224 and 256).
    pub channels: usize,

    /// Make every k-th block (blocks k-1, 2k-1, ... counting from 0) a global pooling block;
    /// 0 disables global pooling. Default 0.
    /// In such a block a second 3x3 convolution of the block input (`global_pooling_channels`
    /// channels, BN, ReLU) is reduced over the board to its mean and max, and a linear layer
    /// turns those into a per-channel bias added to the block's first convolution before its
    /// ReLU, which lets the tower see the whole board at once (KataGo, "Accelerating
    /// Self-Play Learning in Go", 2019; KataGo puts such blocks at a regular interval, about
    /// every third block). AlphaZero and dlshogi: none.
    pub global_pooling_every: usize,

    /// Channels pooled in a global pooling block. Default 32. KataGo: 32 for its small
    /// nets, 64 for b20c256 and larger.
    pub global_pooling_channels: usize,

    /// Channels of the policy head's 3x3 convolution; `None` means `channels`.
    /// Default `None`. AlphaZero (chess/shogi): 256, same as the tower.
    pub policy_channels: Option<usize>,

    /// Channels of the value head's 1x1 convolution. Default 32.
    /// AlphaZero: 1; Leela Chess Zero: 32; KataGo: 32 for small nets.
    pub value_channels: usize,

    /// Hidden units of the value head's fully connected layer. Default 128.
    /// AlphaZero: 256; Leela Chess Zero: 128; dlshogi: 256.
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
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("net.{field} must be at least {min} (got {value})")]
    TooSmall { field: &'static str, value: usize, min: usize },
    #[error("net.{field} = {value} is larger than the supported maximum {max}")]
    TooLarge { field: &'static str, value: usize, max: usize },
}

impl NetConfig {
    /// Checks the ranges of every field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let check = |field, value: usize, min, max| {
            if value < min {
                Err(ConfigError::TooSmall { field, value, min })
            } else if value > max {
                Err(ConfigError::TooLarge { field, value, max })
            } else {
                Ok(())
            }
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

    /// The input options this network is built for.
    pub fn encoder_options(&self) -> crate::encoding::EncoderOptions {
        crate::encoding::EncoderOptions { attack_planes: self.attack_planes }
    }

    /// Whether block `i` (0-based) is a global pooling block.
    pub fn is_global_pooling_block(&self, i: usize) -> bool {
        self.global_pooling_every > 0 && (i + 1) % self.global_pooling_every == 0
    }
}
