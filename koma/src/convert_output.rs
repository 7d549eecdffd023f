//! Where `koma convert` writes its files: never over one of its inputs, and never twice
//! to one file in a run. Two inputs whose outputs would share a name (`g.usi` with two
//! games writes `g-1.kif` and `g-2.kif`; `g-1.csa` writes `g-1.kif`) each get names of
//! their own, so that every game converted is in a file of its own.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use koma::InputFiles;

/// The output files of one run.
pub struct Outputs {
    inputs: InputFiles,
    claimed: HashSet<PathBuf>,
}

impl Outputs {
    pub fn new(inputs: InputFiles) -> Outputs {
        Outputs { inputs, claimed: HashSet::new() }
    }

    /// Whether writing `path` would replace an input.
    pub fn is_input(&self, path: &Path) -> bool {
        self.inputs.contains(path)
    }

    /// The files for `count` outputs of one input, named after `path` (`g.kif`; for
    /// several `g-1.kif`, `g-2.kif`...) with the first stem under which none of them
    /// was claimed before in this run: the stem of `path`, then that stem with the
    /// input's extension (`g-csa`), then numbered (`g-csa-2`, `g-csa-3`...).
    pub fn claim(&mut self, path: &Path, count: usize, input_extension: &str) -> Vec<PathBuf> {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("game").to_string();
        let marked = match input_extension {
            "" => stem.clone(),
            ext => format!("{stem}-{ext}"),
        };
        let stems = std::iter::once(stem).chain(std::iter::once(marked.clone()));
        let stems = stems.chain((2..).map(|n| format!("{marked}-{n}")));
        for stem in stems {
            let names = names(path, &stem, count);
            if names.iter().all(|n| !self.claimed.contains(n)) {
                self.claimed.extend(names.iter().cloned());
                return names;
            }
        }
        unreachable!("the numbered stems never run out")
    }
}

/// `count` files named after `path` with `stem`: `stem.ext` for one, `stem-1.ext`,
/// `stem-2.ext`... for several.
fn names(path: &Path, stem: &str, count: usize) -> Vec<PathBuf> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let name = |stem: String| path.with_file_name(if ext.is_empty() { stem } else { format!("{stem}.{ext}") });
    match count {
        1 => vec![name(stem.to_string())],
        _ => (1..=count).map(|i| name(format!("{stem}-{i}"))).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colliding_outputs_get_names_of_their_own() {
        let mut out = Outputs::new(InputFiles::default());
        let dir = Path::new("out");
        assert_eq!(out.claim(&dir.join("g-1.kif"), 1, "csa"), [dir.join("g-1.kif")]);
        assert_eq!(out.claim(&dir.join("g.kif"), 2, "usi"), [dir.join("g-usi-1.kif"), dir.join("g-usi-2.kif")]);
        assert_eq!(out.claim(&dir.join("g.kif"), 1, "kif"), [dir.join("g.kif")]);
        assert_eq!(out.claim(&dir.join("g.kif"), 1, "ki2"), [dir.join("g-ki2.kif")]);
        assert_eq!(out.claim(&dir.join("g.kif"), 1, "ki2"), [dir.join("g-ki2-2.kif")]);
        assert_eq!(out.claim(&dir.join("sub/g.kif"), 1, "ki2"), [dir.join("sub/g.kif")]);
    }
}
