//! The search setting a network was trained with and players default to
//! ([`LeafMaterial`]), as checkpoints and model files record it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::CheckpointError;
use crate::network::config::{check_real, ConfigError, Range};

/// The search's leaf material setting a network was trained with: the `[search]` table's
/// `leaf_material_mix` and `leaf_material_scale` of the run that trained it
/// (`search::SearchConfig`). The network learned its values beside the rules' material,
/// and plays much better when its search mixes the material in the same way, so players
/// default to it: koma-usi's `MaterialMix` and `MaterialScale` left at auto (-1), and the
/// arena's koma players without `leaf_material_mix` / `leaf_material_scale` keys.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafMaterial {
    /// Share of each new leaf's value taken from the rules' material after the captures on
    /// offer instead of the network (`leaf_material_mix`). Valid: [0, 1].
    pub mix: f32,
    /// Material units per logistic unit of that material value (`leaf_material_scale`).
    /// Valid: [1, 1000].
    pub scale: f32,
}

impl LeafMaterial {
    /// Checks both fields against the ranges the search takes (`SearchConfig::validate`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_real("leaf_material.mix", self.mix, Range::Closed(0.0, 1.0))?;
        check_real("leaf_material.scale", self.scale, Range::Closed(1.0, 1000.0))
    }
}

/// Refuses a leaf material record outside the ranges the search takes.
pub fn validate_leaf_material(record: Option<&LeafMaterial>, path: &Path) -> Result<(), CheckpointError> {
    match record {
        Some(m) => m.validate().map_err(|cause| CheckpointError::BadLeafMaterial { path: path.into(), cause }),
        None => Ok(()),
    }
}
