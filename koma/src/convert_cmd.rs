//! `koma convert`: game records from one format to another, one file, many
//! files or whole directories at once. Inputs are record files (KIF, KI2, CSA, USI),
//! dlshogi's hcpe and hcpe3 files or YaneuraOu's psv files ([`koma::record_input`]).
//!
//! A bad file does not stop the run: its error is printed as
//! `file:line: message` and the next file is read. The last line on stderr
//! is the summary `files N, games N, moves N, errors N` (then `-> N files written` when
//! writing files); the exit status is 2 when any file failed. An output is written
//! (atomically) only for an input that converted, never over an input, and never twice
//! in one run ([`crate::convert_output`]).

use crate::convert_output::Outputs;
use anyhow::{Context, Result};
use clap::Args;
use koma::record_input::Source;
use koma::{BadInput, InputFiles};
use rules::records::{
    encode_record, write_csa_with, write_record, written_encoding, CsaVersion, Encoding, ErrorKind, Format, Record,
    RecordError,
};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct ConvertArgs {
    /// Input format: kif, ki2, csa, usi, hcpe, hcpe3 (dlshogi's training files) or psv
    /// (YaneuraOu's PackedSfenValue), the training files read back as their games:
    /// positions, moves and results. Guessed from each file's extension when left out
    /// (.kif .kifu .ki2 .ki2u .csa .usi .sfen .hcpe .hcpe3 .psv); psv files named .bin
    /// need --from psv.
    #[arg(long)]
    from: Option<String>,
    /// Output format: kif, ki2, csa, usi or western; or hcpe or psv (records to dlshogi's
    /// or YaneuraOu's training positions), which write all inputs into the one file -o
    /// (sample chunks go to hcpe3 with `koma convert-samples`). Guessed from the
    /// extension of -o when left out (.hcpe, .psv; a .bin file needs --to psv).
    #[arg(long)]
    to: Option<String>,
    /// Record files or directories (searched recursively for record
    /// files). None: standard input.
    inputs: Vec<PathBuf>,
    /// Where to write: a file for one input, a directory for several (or
    /// for a directory). Standard output when left out.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Encoding of KIF and KI2 output: utf-8 or sjis (Shift_JIS, cp932). Default: as
    /// other programs expect from the file name: `.kif`/`.ki2` Shift_JIS,
    /// `.kifu`/`.ki2u` UTF-8 (a directory gets `.kif`/`.ki2` files); standard output
    /// UTF-8.
    #[arg(long)]
    encoding: Option<String>,
    /// CSA version to write: 2.2 or 3.0.
    #[arg(long, default_value = "2.2")]
    csa_version: String,
}

/// One file to read: where it is, the path to name its output by, and
/// its format.
#[derive(Clone)]
struct Input {
    path: PathBuf,
    relative: PathBuf,
    format: Option<Source>,
}

#[derive(Default)]
struct Tally {
    files: usize,
    games: usize,
    moves: usize,
    errors: usize,
    /// Output files written.
    written: usize,
}

fn parse_format(name: &str) -> Result<Format> {
    Format::from_name(name).ok_or_else(|| {
        let name = rules::excerpt(name);
        BadInput(format!("unknown format '{name}' (expected kif, ki2, csa, usi, western, hcpe or psv)")).into()
    })
}

fn extension(path: &Path) -> String {
    path.extension().and_then(|e| e.to_str()).unwrap_or("").to_string()
}

/// Record files under `dir`, sorted, with their path below `dir`.
fn walk(dir: &Path, root: &Path, from: Option<Source>, out: &mut Vec<Input>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading directory {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, root, from, out)?;
            continue;
        }
        let ext = extension(&path);
        let by_extension = Source::from_extension(&ext);
        let wanted = match from {
            Some(f) => f.takes_extension(&ext),
            None => by_extension.is_some(),
        };
        if wanted {
            let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            out.push(Input { path, relative, format: by_extension });
        }
    }
    Ok(())
}

/// The files under `paths` (directories walked), with the format each is read in.
fn gather(paths: &[PathBuf], from: Option<Source>) -> Result<(Vec<Input>, bool)> {
    let mut inputs = Vec::new();
    let mut any_directory = false;
    for path in paths {
        if path.is_dir() {
            any_directory = true;
            walk(path, path, from, &mut inputs)?;
        } else {
            let relative = PathBuf::from(path.file_name().unwrap_or(path.as_os_str()));
            let format = Source::from_extension(&extension(path));
            inputs.push(Input { path: path.clone(), relative, format });
        }
    }
    Ok((inputs, any_directory))
}

pub fn convert(args: ConvertArgs) -> Result<ExitCode> {
    let from = args.from.as_deref().map(Source::from_name).transpose()?;
    let by_output = args.output.as_deref().map(extension);
    if let Some(to @ ("hcpe" | "hcpe3" | "psv")) = args.to.as_deref().or(by_output.as_deref()) {
        return crate::convert_hcpe::convert(to, from, &args.inputs, args.output.as_deref());
    }
    let encoding = match &args.encoding {
        Some(name) => Some(
            Encoding::from_name(name)
                .ok_or_else(|| BadInput(format!("unknown encoding '{name}' (expected utf-8 or sjis)")))?,
        ),
        None => None,
    };
    let csa_version = match args.csa_version.as_str() {
        "2.2" | "V2.2" => CsaVersion::V22,
        "3.0" | "V3.0" => CsaVersion::V30,
        v => return Err(BadInput(format!("unknown CSA version '{v}' (expected 2.2 or 3.0)")).into()),
    };

    let (inputs, any_directory) = gather(&args.inputs, from)?;
    let many = any_directory || inputs.len() > 1;

    let to = match (&args.to, &args.output) {
        (Some(t), _) => parse_format(t)?,
        (None, Some(out)) if !many => Format::from_extension(&extension(out))
            .ok_or_else(|| BadInput(format!("say --to: cannot tell a format from '{}'", out.display())))?,
        _ => return Err(BadInput("say which format to write with --to".into()).into()),
    };
    let mut outputs = Outputs::new(InputFiles::new(inputs.iter().map(|i| i.path.as_path())));
    let destination = Destination::of(args.output.as_deref(), many, &outputs)?;
    let encoding = encoding.unwrap_or_else(|| destination.default_encoding());
    let writer = Writer { to, encoding, csa_version };

    let mut tally = Tally::default();
    if args.inputs.is_empty() {
        let from = from.ok_or_else(|| BadInput("reading standard input needs --from".into()))?;
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).context("reading standard input")?;
        let input = Input { path: PathBuf::from("-"), relative: PathBuf::from("stdin"), format: Some(from) };
        convert_one(&input, &bytes, from, &writer, &destination, &mut outputs, &mut tally);
    } else {
        for input in &inputs {
            let Some(format) = from.or(input.format) else {
                report(&input.path, None, "cannot tell the format from the extension; say --from", &mut tally);
                continue;
            };
            match std::fs::read(&input.path) {
                Ok(bytes) => convert_one(input, &bytes, format, &writer, &destination, &mut outputs, &mut tally),
                Err(e) => report(&input.path, None, &e.to_string(), &mut tally),
            }
        }
    }
    let written = match destination {
        Destination::Stdout => String::new(),
        _ => format!(" -> {} written", plural(tally.written, "file")),
    };
    eprintln!("files {}, games {}, moves {}, errors {}{written}", tally.files, tally.games, tally.moves, tally.errors);
    Ok(if tally.errors > 0 { ExitCode::from(2) } else { ExitCode::SUCCESS })
}

/// `1 file`, `2 files`.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

enum Destination {
    Stdout,
    File(PathBuf),
    Directory(PathBuf),
}

impl Destination {
    /// Where `-o` says to write: a directory for several inputs (made if missing), a file
    /// for one, which must not be that input.
    fn of(output: Option<&Path>, many: bool, outputs: &Outputs) -> Result<Destination> {
        Ok(match output {
            None => Destination::Stdout,
            Some(dir) if many || dir.is_dir() => {
                if dir.is_file() {
                    return Err(BadInput(format!("-o {}: several inputs need a directory", dir.display())).into());
                }
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
                Destination::Directory(dir.to_path_buf())
            }
            Some(file) if outputs.is_input(file) => {
                let why = format!("-o {}: that is an input; write to another file", file.display());
                return Err(BadInput(why).into());
            }
            Some(file) => Destination::File(file.to_path_buf()),
        })
    }

    /// The encoding KIF and KI2 text is written in unless `--encoding` says: the one
    /// Japanese programs expect of the file's extension (`.kifu`/`.ki2u` UTF-8,
    /// `.kif`/`.ki2` Shift_JIS; files written into a directory are named `.kif`/`.ki2`),
    /// and UTF-8 on a terminal or pipe.
    fn default_encoding(&self) -> Encoding {
        match self {
            Destination::Stdout => Encoding::Utf8,
            Destination::File(path) => written_encoding(&extension(path)),
            Destination::Directory(_) => Encoding::ShiftJis,
        }
    }
}

struct Writer {
    to: Format,
    encoding: Encoding,
    csa_version: CsaVersion,
}

impl Writer {
    fn text(&self, record: &Record) -> Result<String, RecordError> {
        match self.to {
            Format::Csa => write_csa_with(record, self.csa_version),
            f => write_record(f, record),
        }
    }

    /// The bytes of the games of one input: formats that hold several
    /// games in a file (CSA, USI, Western) get them all; KIF and KI2 one
    /// each, so `Vec` holds one entry per output file.
    fn files(&self, games: &[Record]) -> Result<Vec<Vec<u8>>, RecordError> {
        let texts: Vec<String> = games.iter().map(|g| self.text(g)).collect::<Result<_, _>>()?;
        let encoding = match self.to {
            Format::Kif | Format::Ki2 => self.encoding,
            _ => Encoding::Utf8,
        };
        match self.to {
            Format::Kif | Format::Ki2 => texts.iter().map(|t| encode_record(self.to, t, encoding)).collect(),
            Format::Csa => encode_record(self.to, &texts.join("/\n"), encoding).map(|b| vec![b]),
            Format::Usi => encode_record(self.to, &texts.concat(), encoding).map(|b| vec![b]),
            Format::Western => encode_record(self.to, &texts.join("\n"), encoding).map(|b| vec![b]),
        }
    }

    fn extension(&self) -> &'static str {
        self.to.extension(self.encoding)
    }
}

fn report(path: &Path, line: Option<usize>, message: &str, tally: &mut Tally) {
    tally.errors += 1;
    match line {
        Some(l) => eprintln!("{}:{l}: {message}", path.display()),
        None => eprintln!("{}: {message}", path.display()),
    }
}

fn convert_one(
    input: &Input,
    bytes: &[u8],
    format: Source,
    writer: &Writer,
    destination: &Destination,
    outputs: &mut Outputs,
    tally: &mut Tally,
) {
    tally.files += 1;
    let games = match format.read(bytes, &extension(&input.path)) {
        Ok(games) => games,
        Err(e) => return report(&input.path, e.line, &e.message, tally),
    };
    let files = match writer.files(&games) {
        Ok(files) => files,
        Err(e) => {
            let hint = if e.kind == ErrorKind::Unencodable {
                " (write UTF-8: a .kifu/.ki2u name or --encoding utf-8)"
            } else {
                ""
            };
            let message = format!("writing {}: {}{hint}", writer.to.name(), e.message());
            return report(&input.path, e.line, &message, tally);
        }
    };
    let named = match destination {
        Destination::Stdout => None,
        Destination::File(path) => Some(path.clone()),
        Destination::Directory(dir) => Some(dir.join(&input.relative).with_extension(writer.extension())),
    };
    let written = match named {
        None => {
            let mut out = std::io::stdout().lock();
            files.iter().try_for_each(|f| out.write_all(f)).map_err(WriteError::Stdout)
        }
        Some(path) => {
            let paths = outputs.claim(&path, files.len(), &extension(&input.path).to_ascii_lowercase());
            write_files(&paths, &files, outputs).map(|n| tally.written += n)
        }
    };
    if let Err(e) = written {
        return report(&input.path, None, &format!("writing output: {e}"), tally);
    }
    tally.games += games.len();
    tally.moves += games.iter().map(|g| g.moves.len()).sum::<usize>();
}

/// Why converted games could not be written.
#[derive(Debug, thiserror::Error)]
enum WriteError {
    #[error("{0}")]
    Stdout(std::io::Error),
    #[error("{} is an input of this run; not replaced", .0.display())]
    WouldReplaceInput(PathBuf),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

/// Writes each of `files` to its path (atomically), none over an input; returns how
/// many were written.
fn write_files(paths: &[PathBuf], files: &[Vec<u8>], outputs: &Outputs) -> Result<usize, WriteError> {
    if let Some(input) = paths.iter().find(|p| outputs.is_input(p)) {
        return Err(WriteError::WouldReplaceInput(input.clone()));
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WriteError::Io { path, source }
    };
    for (path, bytes) in paths.iter().zip(files) {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        files::write_atomic(path, bytes).map_err(io(path))?;
    }
    Ok(paths.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(from: Option<&str>, to: &str, inputs: Vec<PathBuf>, output: Option<PathBuf>) -> ConvertArgs {
        ConvertArgs {
            from: from.map(str::to_string),
            to: Some(to.to_string()),
            inputs,
            output,
            encoding: None,
            csa_version: "2.2".into(),
        }
    }

    #[test]
    fn a_directory_converts_past_a_bad_file() {
        let dir = std::env::temp_dir().join(format!("koma-convert-{}", std::process::id()));
        let (src, out) = (dir.join("in"), dir.join("out"));
        std::fs::create_dir_all(src.join("sub")).unwrap();
        std::fs::write(src.join("a.csa"), "V2.2\nPI\n+\n+7776FU\n-3334FU\n%TORYO\n").unwrap();
        std::fs::write(src.join("sub/b.usi"), "startpos moves 2g2f\nstartpos moves 7g7f 8c8d\n").unwrap();
        std::fs::write(src.join("sub/bad.csa"), "V2.2\nPI\n+\n+7775FU\n").unwrap();
        std::fs::write(src.join("notes.md"), "not a record").unwrap();
        let code = convert(args(None, "kif", vec![src.clone()], Some(out.clone()))).unwrap();
        assert_eq!(code, ExitCode::from(2), "a bad file fails the run");
        // KIF files in a directory are `.kif`, in Shift_JIS (cp932) as other programs expect.
        let bytes = std::fs::read(out.join("a.kif")).unwrap();
        assert!(std::str::from_utf8(&bytes).is_err(), "Shift_JIS, not UTF-8");
        let (kif, _) = rules::records::decode(&bytes, Some(Encoding::ShiftJis)).unwrap();
        assert!(kif.contains("   2 ３四歩(33)"), "{kif}");
        assert!(out.join("sub/b-1.kif").exists() && out.join("sub/b-2.kif").exists());
        assert!(!out.join("sub/bad.kif").exists());
        // A file named .kifu is UTF-8; --encoding wins over the name.
        let named = dir.join("named.kifu");
        assert_eq!(
            convert(args(None, "kif", vec![src.join("a.csa")], Some(named.clone()))).unwrap(),
            ExitCode::SUCCESS
        );
        assert!(std::fs::read_to_string(&named).unwrap().contains("３四歩"));
        let mut forced = args(None, "kif", vec![src.join("a.csa")], Some(dir.join("forced.kif")));
        forced.encoding = Some("utf-8".into());
        assert_eq!(convert(forced).unwrap(), ExitCode::SUCCESS);
        assert!(std::fs::read_to_string(dir.join("forced.kif")).unwrap().contains("encoding=UTF-8"));
        // One file to one named file, the format from -o's extension.
        let single = dir.join("a.csa");
        let mut one = args(Some("csa"), "csa", vec![src.join("a.csa")], Some(single.clone()));
        one.to = None;
        assert_eq!(convert(one).unwrap(), ExitCode::SUCCESS);
        assert!(std::fs::read_to_string(&single).unwrap().contains("+7776FU\n-3334FU\n%TORYO\n"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
