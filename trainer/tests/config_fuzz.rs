//! Config files at the door: random and mutated config texts never panic the
//! reader, and a config that is accepted says exactly what its text says: every key is a
//! known field, every value comes back unchanged, and no value is NaN or infinite. The
//! loops are bounded (a count and a time cap) and print how many inputs they tried.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use search::Rng;
use trainer::TrainFileConfig;

const TABLES: [&str; 6] = ["model", "net", "search", "selfplay", "train", "eval"];
const TYPO_TABLES: [&str; 5] = ["trian", "Search", "modle", "selfply", "extra"];

/// The fields of each table, from the serialised defaults (plus the optional fields,
/// which serialise to nothing).
fn known_fields() -> BTreeMap<&'static str, Vec<String>> {
    let d = TrainFileConfig::from_toml("", "defaults").unwrap();
    let keys = |v: toml::Value| v.as_table().unwrap().keys().cloned().collect::<Vec<_>>();
    let mut model = keys(toml::Value::try_from(&d.base.model).unwrap());
    // Serialised only when set (files without them stay as they were).
    model.extend(["policy_channels", "reply_policy_head", "material_head"].map(String::from));
    let mut selfplay = keys(toml::Value::try_from(&d.base.selfplay).unwrap());
    selfplay.push("opening_file".into());
    let mut eval = keys(toml::Value::try_from(&d.eval).unwrap());
    eval.extend(["openings", "early_games", "ladder_start"].map(String::from));
    BTreeMap::from([
        ("model", model.clone()),
        ("net", model),
        ("search", keys(toml::Value::try_from(&d.base.search).unwrap())),
        ("selfplay", selfplay),
        ("train", keys(toml::Value::try_from(&d.train).unwrap())),
        ("eval", eval),
    ])
}

fn pick<'a, T>(rng: &mut Rng, items: &'a [T]) -> &'a T {
    &items[rng.below(items.len())]
}

fn random_value(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => pick(rng, &["-1", "0", "1", "2", "7", "100", "65536", "100000", "2147483648", "9223372036854775807"])
            .to_string(),
        1 | 2 => {
            pick(rng, &["0.0", "0.5", "1.0", "-0.5", "1e-30", "1e30", "inf", "-inf", "nan", "+nan", "2.5", "0.999"])
                .to_string()
        }
        3 => pick(rng, &["true", "false"]).to_string(),
        4 => format!(
            "\"{}\"",
            pick(rng, &["cpu", "cuda:0", "gpu", "x", "random", "sgd", "adamw", "cosine", "constant", "auto", "f32"])
        ),
        _ => pick(rng, &["[\"random\", \"greedy\"]", "[\"x\"]", "[]", "[1, 2]"]).to_string(),
    }
}

fn typo(rng: &mut Rng, word: &str) -> String {
    let mut w: Vec<char> = word.chars().collect();
    let at = rng.below(w.len());
    match rng.below(3) {
        0 => {
            w.remove(at);
        }
        1 => w.insert(at, 'x'),
        _ => w[at] = w[at].to_ascii_uppercase(),
    }
    w.into_iter().collect()
}

fn random_config(rng: &mut Rng, fields: &BTreeMap<&str, Vec<String>>) -> String {
    let mut text = String::new();
    if rng.bernoulli(0.7) {
        let v = pick(rng, &["\"shogi\"", "\"sho\"", "\"dai\"", "\"chess\"", "\"SHO\"", "3"]);
        text += &format!("variant = {v}\n");
    }
    for _ in 0..rng.below(4) {
        let table =
            if rng.bernoulli(0.9) { pick(rng, &TABLES).to_string() } else { pick(rng, &TYPO_TABLES).to_string() };
        text += &format!("[{table}]\n");
        let known = fields.get(table.as_str()).cloned().unwrap_or_else(|| vec!["lr".into()]);
        for _ in 0..rng.below(4) {
            let key = pick(rng, &known).clone();
            let key = if rng.bernoulli(0.1) { typo(rng, &key) } else { key };
            text += &format!("{key} = {}\n", random_value(rng));
        }
    }
    text
}

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..1 + rng.below(2) {
        let i = rng.below(lines.len());
        let line = lines[i].clone();
        let new = match rng.below(5) {
            0 => match line.split_once('=') {
                Some((k, _)) => format!("{k}= {}", random_value(rng)),
                None => line,
            },
            1 => match line.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => format!("{} ={v}", typo(rng, k.trim())),
                _ => line,
            },
            2 if line.starts_with('[') => format!("[{}]", pick(rng, &TYPO_TABLES)),
            3 if !line.is_empty() => {
                let mut chars: Vec<char> = line.chars().collect();
                chars.remove(rng.below(chars.len()));
                chars.into_iter().collect()
            }
            _ => {
                lines.push(line.clone());
                line
            }
        };
        lines[i] = new;
    }
    lines.join("\n") + "\n"
}

/// What an accepted config must satisfy. `Err` describes the silent acceptance.
fn check_accepted(text: &str, cfg: &TrainFileConfig, fields: &BTreeMap<&str, Vec<String>>) -> Result<(), String> {
    let input: toml::Table = text.parse().map_err(|e| format!("accepted text that is not TOML: {e}"))?;
    let parsed = BTreeMap::from([
        ("model", toml::Value::try_from(&cfg.base.model).unwrap()),
        ("net", toml::Value::try_from(&cfg.base.model).unwrap()),
        ("search", toml::Value::try_from(&cfg.base.search).unwrap()),
        ("selfplay", toml::Value::try_from(&cfg.base.selfplay).unwrap()),
        ("train", toml::Value::try_from(&cfg.train).unwrap()),
        ("eval", toml::Value::try_from(&cfg.eval).unwrap()),
    ]);
    for (key, value) in &input {
        if key == "variant" {
            let given = value.as_str().ok_or("variant is not a string")?;
            if !given.eq_ignore_ascii_case(cfg.base.variant.name()) {
                return Err(format!("variant {given} read as {}", cfg.base.variant));
            }
            continue;
        }
        let table = value.as_table().ok_or(format!("[{key}] is not a table"))?;
        let known = fields.get(key.as_str()).ok_or(format!("unknown table [{key}] accepted"))?;
        for (field, v) in table {
            if !known.contains(field) {
                return Err(format!("unknown field {key}.{field} accepted"));
            }
            // The model's optional heads are serialised only when on: false reads as absent.
            let off = toml::Value::Boolean(false);
            let got = match parsed[key.as_str()].get(field) {
                Some(got) => got,
                None if field.ends_with("_head") && *v == off => &off,
                None => return Err(format!("{key}.{field} lost")),
            };
            if !same(v, got) {
                return Err(format!("{key}.{field} = {v} read as {got}"));
            }
        }
    }
    for (table, v) in &parsed {
        for (field, x) in v.as_table().unwrap() {
            if x.as_float().is_some_and(|f| !f.is_finite()) {
                return Err(format!("{table}.{field} = {x} accepted"));
            }
        }
    }
    Ok(())
}

fn same(given: &toml::Value, got: &toml::Value) -> bool {
    let num = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    match (num(given), num(got)) {
        (Some(a), Some(b)) => a == b || ((a - b) / a).abs() < 1e-6,
        _ => given == got,
    }
}

fn run(name: &str, seed: u64, mut input: impl FnMut(&mut Rng) -> String) {
    let fields = known_fields();
    let mut rng = Rng::new(seed);
    let (start, mut tried, mut accepted) = (Instant::now(), 0u64, 0u64);
    while tried < 10_000 && start.elapsed() < Duration::from_secs(10) {
        let text = input(&mut rng);
        tried += 1;
        match TrainFileConfig::from_toml(&text, "fuzz.toml") {
            Ok(cfg) => {
                accepted += 1;
                if let Err(why) = check_accepted(&text, &cfg, &fields) {
                    panic!("{why}; config:\n{text}");
                }
            }
            Err(e) => assert!(e.to_string().starts_with("fuzz.toml: "), "error without the file: {e}"),
        }
    }
    println!("config fuzz ({name}): {tried} inputs, {accepted} accepted and checked");
}

#[test]
fn fuzz_random_configs() {
    let fields = known_fields();
    run("random", 0xc0f1_0001, |rng| random_config(rng, &fields));
}

#[test]
fn fuzz_mutated_shipped_configs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let mut texts: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    texts.sort();
    assert!(texts.len() >= 3);
    run("mutated", 0xc0f1_0002, |rng| {
        let text = pick(rng, &texts).clone();
        mutate(rng, &text)
    });
}
