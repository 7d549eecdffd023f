//! How players are given on the command line ([`PlayerSpec`]: `NAME=SPEC`) and the
//! factory that makes every kind of player from its spec ([`PlayerSpec::create`]).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use rules::Variant;

use crate::baseline::{Baseline, BaselineKind, MAX_MATERIAL_DEPTH};
use crate::koma_player::{KomaConfig, KomaConfigError, KomaLoadError, KomaNetwork, KomaPlayer, DEFAULT_KOMA_NODES};
use crate::player::{Fault, Player, TimeControl};
use crate::usi::UsiEngine;
use crate::xboard::XboardEngine;

/// Engines run in the match's own folder, so an option naming a file or folder relative
/// to where `koma arena` was started (`ModelFile=runs/x/checkpoints/ckpt-00000100`) is
/// handed over as an absolute path; every other value goes as written.
fn absolute_paths(options: &[(String, String)]) -> Vec<(String, String)> {
    let Ok(here) = std::env::current_dir() else { return options.to_vec() };
    options
        .iter()
        .map(|(k, v)| {
            let path = Path::new(v);
            // A checkpoint is named by its stem, so a folder that exists is enough.
            let names_a_place = if v.contains('/') {
                path.parent().is_some_and(|dir| dir.as_os_str().is_empty() || dir.is_dir())
            } else {
                v.contains('.') && v.parse::<f64>().is_err() && path.exists()
            };
            let value = if path.is_relative() && names_a_place {
                here.join(path).to_string_lossy().into_owned()
            } else {
                v.clone()
            };
            (k.clone(), value)
        })
        .collect()
}

/// How a player is given on the command line: `NAME=SPEC` with SPEC one of `random`,
/// `greedy`, `material:DEPTH[,random=P]` (see [`crate::baseline`]), `koma:CHECKPOINT[,nodes=N][,device=D][,backend=B][,batch=B][,threads=T][,FIELD=VALUE...]`
/// (FIELD: a `[search]` field, see [`KomaConfig`]), `usi:COMMAND[,Option=Value...]`,
/// `xboard:COMMAND[,Option=Value...]`.
///
/// For engines the keys `depth` and `nodes` (lower case) are the arena's, not options:
/// they fix this player's limit per move whatever the match's `--tc` is (USI
/// `go depth N` / `go nodes N`, XBoard `sd N`); so is `lag=MS`, which delays every line
/// of the engine by MS milliseconds on its way to the arena (a network between a GUI
/// and a remote engine: its moves arrive MS later on the arena's clock). Every other
/// `Key=Value` becomes a USI `setoption name Key value Value` or an XBoard `option Key=Value`.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerSpec {
    pub name: String,
    pub kind: SpecKind,
    /// Per-player fixed limit (`nodes=N` or `depth=N`), overriding the match's.
    pub limit: Option<TimeControl>,
    /// Engines: the delay of every line on its way to the arena (`lag=MS`).
    pub lag: Duration,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SpecKind {
    Random,
    Greedy,
    /// The material search player (`material:DEPTH[,random=P]`).
    Material {
        depth: u32,
        random_share: f64,
    },
    Koma {
        checkpoint: PathBuf,
        device: String,
        /// `backend=`: auto (the default), torch or cpu ([`nn::Backend`]).
        backend: nn::Backend,
        config: KomaConfig,
    },
    Usi {
        argv: Vec<String>,
        options: Vec<(String, String)>,
    },
    Xboard {
        argv: Vec<String>,
        options: Vec<(String, String)>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad player '{text}': {why}")]
pub struct BadPlayerSpec {
    pub text: String,
    pub why: String,
}

impl FromStr for PlayerSpec {
    type Err = BadPlayerSpec;
    fn from_str(text: &str) -> Result<PlayerSpec, BadPlayerSpec> {
        let bad = |why: &str| BadPlayerSpec { text: text.to_string(), why: why.to_string() };
        let (name, spec) = text.split_once('=').ok_or_else(|| bad("expected NAME=SPEC"))?;
        let name = name.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(bad("the name must be one word"));
        }
        let spec = spec.trim();
        let (kind_word, rest) = match spec.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (spec, None),
        };
        let mut parts = rest.map(|r| r.split(',').map(str::trim).collect::<Vec<_>>()).unwrap_or_default();
        let head = if parts.is_empty() { None } else { Some(parts.remove(0)) };
        let mut options = Vec::new();
        let mut limit = None;
        let mut device = "cpu".to_string();
        let mut backend = nn::Backend::Auto;
        let mut lag = Duration::ZERO;
        for p in parts {
            if p.is_empty() {
                continue;
            }
            let (k, v) = p.split_once('=').ok_or_else(|| bad(&format!("'{p}' is not Key=Value")))?;
            let (k, v) = (k.trim(), v.trim());
            match k {
                "nodes" | "depth" => {
                    let tc = format!("{k}={v}").parse::<TimeControl>().map_err(|e| bad(&e.to_string()))?;
                    limit = Some(tc);
                }
                "lag" if kind_word == "usi" || kind_word == "xboard" => {
                    let ms: u64 = v.parse().map_err(|_| bad(&format!("lag={v}: expected milliseconds")))?;
                    lag = Duration::from_millis(ms);
                }
                "device" if kind_word == "koma" => device = v.to_string(),
                "backend" if kind_word == "koma" => {
                    backend = v.parse().map_err(|e: nn::UnknownBackend| bad(&e.to_string()))?
                }
                _ => options.push((k.to_string(), v.to_string())),
            }
        }
        let argv = |head: Option<&str>| -> Result<Vec<String>, BadPlayerSpec> {
            let h = head.ok_or_else(|| bad("missing the engine command"))?;
            let argv = shlex::split(h).ok_or_else(|| bad("unbalanced quotes in the command"))?;
            if argv.is_empty() {
                return Err(bad("missing the engine command"));
            }
            Ok(argv)
        };
        let kind = match kind_word {
            "random" | "greedy" if head.is_some() => return Err(bad("random and greedy take no arguments")),
            "random" => SpecKind::Random,
            "greedy" => SpecKind::Greedy,
            "material" => material_spec(head, &options).map_err(|why| bad(&why.to_string()))?,
            "koma" => {
                let path = head.filter(|h| !h.is_empty()).ok_or_else(|| bad("missing the checkpoint path"))?;
                let mut config = KomaConfig::default();
                for (k, v) in &options {
                    config.set(k, v).map_err(|why| bad(&why.to_string()))?;
                }
                if matches!(limit, Some(TimeControl::Depth(_))) {
                    return Err(bad("koma players take nodes=N, not depth"));
                }
                SpecKind::Koma { checkpoint: PathBuf::from(path), device, backend, config }
            }
            "usi" => SpecKind::Usi { argv: argv(head)?, options },
            "xboard" => {
                if matches!(limit, Some(TimeControl::Nodes(_))) {
                    return Err(bad("XBoard engines take depth=N, not nodes"));
                }
                SpecKind::Xboard { argv: argv(head)?, options }
            }
            _ => return Err(bad("SPEC must be random, greedy, material:..., koma:..., usi:... or xboard:...")),
        };
        Ok(PlayerSpec { name: name.to_string(), kind, limit, lag })
    }
}

/// What is wrong with a `material:` spec.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum BadMaterialSpec {
    #[error("material takes a depth from 1 to {MAX_MATERIAL_DEPTH}: material:2")]
    Depth,
    #[error("random={0}: expected a probability from 0 to 1")]
    RandomShare(String),
    #[error("material takes only random=P, not '{0}'")]
    Option(String),
}

/// `material:DEPTH[,random=P]`: DEPTH in 1..=MAX_MATERIAL_DEPTH, P in [0, 1].
fn material_spec(head: Option<&str>, options: &[(String, String)]) -> Result<SpecKind, BadMaterialSpec> {
    let depth: u32 = head
        .and_then(|h| h.parse().ok())
        .filter(|d| (1..=MAX_MATERIAL_DEPTH).contains(d))
        .ok_or(BadMaterialSpec::Depth)?;
    let mut random_share = 0.0;
    for (k, v) in options {
        match k.as_str() {
            "random" => {
                random_share = v
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=1.0).contains(p))
                    .ok_or_else(|| BadMaterialSpec::RandomShare(v.clone()))?
            }
            _ => return Err(BadMaterialSpec::Option(k.clone())),
        }
    }
    Ok(SpecKind::Material { depth, random_share })
}

impl PlayerSpec {
    /// The limit this player moves under in a match with time control `tc`.
    pub fn effective_limit(&self, tc: TimeControl) -> TimeControl {
        match (&self.kind, self.limit) {
            (_, Some(l)) => l,
            // Built-in players ignore limits; koma under depth falls back to its default nodes.
            (SpecKind::Koma { .. }, None) if matches!(tc, TimeControl::Depth(_)) => {
                TimeControl::Nodes(DEFAULT_KOMA_NODES)
            }
            _ => tc,
        }
    }

    /// Whether the player is one of ours (no process).
    pub fn is_builtin(&self) -> bool {
        matches!(self.kind, SpecKind::Random | SpecKind::Greedy | SpecKind::Material { .. } | SpecKind::Koma { .. })
    }

    /// Creates the player for a game of `variant`. Engine processes run in `workdir` and
    /// must finish their handshake within `handshake_timeout`.
    pub fn create(
        &self,
        variant: Variant,
        seed: u64,
        workdir: &Path,
        handshake_timeout: Duration,
    ) -> Result<Box<dyn Player>, PlayerStartError> {
        Ok(match &self.kind {
            SpecKind::Random => Box::new(Baseline::random(seed)),
            SpecKind::Greedy => Box::new(Baseline::greedy(seed)),
            SpecKind::Material { depth, random_share } => {
                Box::new(Baseline::new(BaselineKind::Material { depth: *depth, random_share: *random_share }, seed))
            }
            SpecKind::Koma { checkpoint, device, backend, config } => {
                let network = KomaNetwork::load_with(checkpoint, *backend, device, variant)?;
                Box::new(KomaPlayer::new(network, config.clone(), variant)?)
            }
            SpecKind::Usi { argv, options } => {
                let mut engine = UsiEngine::start(argv, &absolute_paths(options), variant, workdir, handshake_timeout)?;
                engine.set_lag(self.lag);
                Box::new(engine)
            }
            SpecKind::Xboard { argv, options } => {
                let mut engine =
                    XboardEngine::start(argv, &absolute_paths(options), variant, workdir, handshake_timeout)?;
                engine.set_lag(self.lag);
                Box::new(engine)
            }
        })
    }
}

/// Why a player could not be made: its network did not load, its search settings do not
/// suit play, or its engine did not start (the handshake's fault).
#[derive(Debug, thiserror::Error)]
pub enum PlayerStartError {
    #[error(transparent)]
    Network(#[from] KomaLoadError),
    #[error(transparent)]
    Search(#[from] KomaConfigError),
    #[error(transparent)]
    Engine(#[from] Fault),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        let p: PlayerSpec = "fsf=usi:/usr/games/fairy-stockfish,Threads=1,depth=3".parse().unwrap();
        assert_eq!(p.name, "fsf");
        assert_eq!(p.limit, Some(TimeControl::Depth(3)));
        assert_eq!(
            p.kind,
            SpecKind::Usi {
                argv: vec!["/usr/games/fairy-stockfish".into()],
                options: vec![("Threads".into(), "1".into())]
            }
        );
        let p: PlayerSpec = "gps=usi:gpsusi --foo 'a b',LimitDepth=4".parse().unwrap();
        assert!(matches!(&p.kind, SpecKind::Usi { argv, .. } if argv == &["gpsusi", "--foo", "a b"]));
        let p: PlayerSpec = "net=koma:runs/x/ckpt-100,nodes=64".parse().unwrap();
        assert_eq!(p.limit, Some(TimeControl::Nodes(64)));
        assert!("r=random".parse::<PlayerSpec>().is_ok());
        assert!("g=greedy".parse::<PlayerSpec>().is_ok());
        let m: PlayerSpec = "m=material:2,random=0.25".parse().unwrap();
        assert_eq!(m.kind, SpecKind::Material { depth: 2, random_share: 0.25 });
        assert!(m.is_builtin());
        for bad in ["m=material", "m=material:0", "m=material:9", "m=material:2,random=1.5", "m=material:2,foo=1"] {
            assert!(bad.parse::<PlayerSpec>().is_err(), "{bad} parsed");
        }
        let p: PlayerSpec = "net=koma:ckpt,batch=4,threads=2,c_puct=1.5,gumbel=false".parse().unwrap();
        let SpecKind::Koma { config, .. } = &p.kind else { panic!("{p:?}") };
        assert_eq!((config.batch_size, config.threads), (4, 2));
        assert_eq!((config.search.c_puct, config.search.gumbel), (1.5, false));
        // The search is the engine's (PUCT root): a Gumbel root is refused with the reason.
        let err = "net=koma:ckpt,gumbel=true".parse::<PlayerSpec>().unwrap_err();
        assert!(err.why.contains("PUCT"), "{err}");
        assert_eq!(config.search.fpu_reduction, search::SearchConfig::default().fpu_reduction);
        for bad in [
            "random",
            "x=usi:",
            "x=koma:",
            "x=foo",
            "x=usi:e,Hash",
            "x=random:3",
            "a b=random",
            "x=koma:c,depth=3",
            "x=koma:c,batch=0",
            "x=koma:c,threads=x",
            "x=koma:c,Hash=16",
            "x=koma:c,c_puct=high",
        ] {
            assert!(bad.parse::<PlayerSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn option_paths_relative_to_the_arena_become_absolute() {
        let here = std::env::current_dir().unwrap();
        let options: Vec<(String, String)> = [
            ("ModelFile", "src/ckpt-00000100"),
            ("EvalDir", "src"),
            ("Book", "Cargo.toml"),
            ("Threads", "1"),
            ("Ratio", "0.5"),
            ("Missing", "no/such/dir/file"),
            ("Absolute", "/usr/bin"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let got = absolute_paths(&options);
        let value = |k: &str| got.iter().find(|(key, _)| key == k).unwrap().1.clone();
        assert_eq!(value("ModelFile"), here.join("src/ckpt-00000100").to_string_lossy());
        assert_eq!(value("Book"), here.join("Cargo.toml").to_string_lossy());
        for (k, v) in [
            ("EvalDir", "src"),
            ("Threads", "1"),
            ("Ratio", "0.5"),
            ("Missing", "no/such/dir/file"),
            ("Absolute", "/usr/bin"),
        ] {
            assert_eq!(value(k), v, "{k}");
        }
    }
}
