//! Network files: checkpoint pairs and model files, found, read and checked without a
//! backend (`data/FORMAT.md` describes them).

pub mod checkpoint;
pub mod checks;
pub mod error;
pub mod leaf_material;
pub mod loader;
pub mod meta;
pub mod tensors;
