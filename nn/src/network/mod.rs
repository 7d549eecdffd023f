//! What a network is, without building one: its architecture settings, its input and
//! output sizes, and the parameter table a file must hold.

pub mod config;
pub mod params;
pub mod shape;
