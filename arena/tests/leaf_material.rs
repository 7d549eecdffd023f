//! A koma player loaded from a network file plays with the leaf material setting the file
//! records (the one its network was trained with), unless its spec gives the keys.

use std::path::{Path, PathBuf};

use arena::koma_player::{KomaNetwork, KomaPlayer};
use arena::spec::SpecKind;
use arena::PlayerSpec;
use model::encoding::{Encoder, ENCODER_VERSION};
use rules::Variant;

/// A tiny shogi checkpoint at `dir/name` recording `record`.
fn checkpoint(dir: &Path, name: &str, record: Option<model::LeafMaterial>) -> PathBuf {
    let enc = Encoder::new(Variant::Shogi);
    let cfg = model::NetConfig { blocks: 1, channels: 8, value_channels: 4, value_hidden: 8, ..Default::default() };
    let net = model::Net::new(&cfg, enc.net_shape(), 3, model::tch::Device::Cpu).unwrap();
    let path = dir.join(name);
    let info = model::CheckpointInfo {
        variant: "shogi".into(),
        encoder_version: ENCODER_VERSION,
        step: 5,
        leaf_material: record,
    };
    model::save_checkpoint(&net, &path, &info).unwrap();
    path
}

/// The leaf material mix and scale of the player that `spec` makes.
fn played_with(spec: &str) -> (f32, f32) {
    let spec: PlayerSpec = spec.parse().unwrap();
    let SpecKind::Koma { checkpoint, device, config, .. } = spec.kind else { panic!("not a koma player") };
    let network = KomaNetwork::load(&checkpoint, &device, Variant::Shogi).unwrap();
    let player = KomaPlayer::new(network, config, Variant::Shogi).unwrap();
    (player.search().leaf_material_mix, player.search().leaf_material_scale)
}

#[test]
fn a_koma_player_defaults_to_its_networks_leaf_material() {
    let dir = tempfile::tempdir().unwrap();
    let record = model::LeafMaterial { mix: 0.5, scale: 36.0 };
    let with = checkpoint(dir.path(), "with", Some(record));
    let exported = dir.path().join("with-model.safetensors");
    model::export_model(&with, &exported).unwrap();
    for file in [with.with_extension("json"), exported] {
        let f = file.display();
        assert_eq!(played_with(&format!("a=koma:{f}")), (0.5, 36.0), "{f}");
        assert_eq!(played_with(&format!("a=koma:{f},leaf_material_mix=0")), (0.0, 36.0), "{f}");
        assert_eq!(played_with(&format!("a=koma:{f},leaf_material_scale=6,nodes=8")), (0.5, 6.0), "{f}");
        assert_eq!(played_with(&format!("a=koma:{f},leaf_material_mix=0.25,leaf_material_scale=10")), (0.25, 10.0));
    }
    let without = checkpoint(dir.path(), "without", None);
    assert_eq!(played_with(&format!("a=koma:{}", without.display())), (0.0, 6.0));
    assert_eq!(played_with(&format!("a=koma:{},leaf_material_mix=0.5", without.display())), (0.5, 6.0));
}

/// The report names the setting a player takes from its network, which its spec (printed
/// beside it) does not show.
#[test]
fn the_report_note_says_what_comes_from_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let with = checkpoint(dir.path(), "with", Some(model::LeafMaterial { mix: 0.5, scale: 36.0 }));
    let without = checkpoint(dir.path(), "without", None);
    let note = |path: &Path, keys: &str| {
        let spec: PlayerSpec = format!("a=koma:{}{keys}", path.display()).parse().unwrap();
        let SpecKind::Koma { checkpoint, config, .. } = spec.kind else { panic!("not a koma player") };
        config.leaf_material_note(&checkpoint)
    };
    assert_eq!(note(&with, "").as_deref(), Some("leaf material from the network: mix 0.5, scale 36"));
    assert_eq!(note(&with, ",leaf_material_scale=6").as_deref(), Some("leaf material from the network: mix 0.5"));
    assert_eq!(note(&with, ",leaf_material_mix=0,leaf_material_scale=6"), None);
    assert_eq!(note(&without, ""), None);
}
