//! `golden_al_distribution/*.yaml`: the committed acceptance-length (AL)
//! curves, their lookup, and how each engine encodes a simulated AL.
//!
//! A curve file has one top-level key (a model *slug*, not the prefix),
//! under it `thinking_on` and optionally `thinking_off`, under those draft
//! lengths 1–8 mapping to an AL with two decimals. The model prefix, draft
//! method and selector (DSpark draft sampling, draft-head variant such as
//! GQA, checkpoint) come from the file name and its header comments.

use std::fmt;

use super::ParseError;
use super::changelog::yaml::{self, Node};

/// Pinned and golden AL agree when they differ by less than this.
pub(crate) const AL_TOLERANCE: f64 = 0.005;
/// ATOM's rate form is computed with awk, so it gets a wider tolerance.
pub(crate) const ATOM_RATE_TOLERANCE: f64 = 0.01;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ThinkingMode {
    On,
    Off,
}

impl ThinkingMode {
    pub(crate) fn key(self) -> &'static str {
        match self {
            ThinkingMode::On => "thinking_on",
            ThinkingMode::Off => "thinking_off",
        }
    }
}

impl fmt::Display for ThinkingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DraftMethod {
    Mtp,
    Eagle,
    Eagle3,
    DSpark,
    Other(String),
}

impl DraftMethod {
    /// Reads a method name as written in file names or engine configs
    /// (`mtp`, `deepseek_mtp`, `eagle3`, `dspark`, …), case-insensitively.
    pub fn parse(s: &str) -> DraftMethod {
        let l = s.trim().to_ascii_lowercase();
        match l.as_str() {
            "mtp" | "nextn" | "deepseek_mtp" | "qwen3_next_mtp" | "glm4_moe_mtp" => {
                DraftMethod::Mtp
            }
            "eagle" => DraftMethod::Eagle,
            "eagle3" => DraftMethod::Eagle3,
            "dspark" => DraftMethod::DSpark,
            _ if l.ends_with("_mtp") => DraftMethod::Mtp,
            _ => DraftMethod::Other(l),
        }
    }
}

impl fmt::Display for DraftMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DraftMethod::Mtp => f.write_str("mtp"),
            DraftMethod::Eagle => f.write_str("eagle"),
            DraftMethod::Eagle3 => f.write_str("eagle3"),
            DraftMethod::DSpark => f.write_str("dspark"),
            DraftMethod::Other(s) => f.write_str(s),
        }
    }
}

/// DSpark `draft_sample_method`; the engine default is greedy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DraftSampling {
    Greedy,
    Probabilistic,
}

impl DraftSampling {
    pub(crate) fn parse(s: &str) -> Option<DraftSampling> {
        match s.trim().to_ascii_lowercase().as_str() {
            "greedy" | "standard" | "default" => Some(DraftSampling::Greedy),
            "probabilistic" => Some(DraftSampling::Probabilistic),
            _ => None,
        }
    }
}

/// One cell: draft length K → golden AL.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub k: u32,
    pub al: f64,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModeCurve {
    pub mode: ThinkingMode,
    /// Line of the `thinking_on:` / `thinking_off:` key.
    pub line: usize,
    pub cells: Vec<Cell>,
}

/// One golden curve file.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Path as given to `parse`.
    pub file: String,
    /// The model slug (the single top-level key).
    pub slug: String,
    pub slug_line: usize,
    /// Model prefix, from the file name.
    pub prefix: String,
    pub method: DraftMethod,
    pub sampling: DraftSampling,
    /// Draft-head variant from the file name (`gqa`), lower case.
    pub variant: Option<String>,
    /// Checkpoint qualifier from a dashed file name (`pro-0813`).
    pub checkpoint: Option<String>,
    /// Source Actions run URL from the header comment.
    pub source_run: Option<String>,
    /// Draft model id from a `draft: …` header comment.
    pub draft_model: Option<String>,
    pub modes: Vec<ModeCurve>,
}

impl Curve {
    /// The file name without directories.
    pub fn name(&self) -> &str {
        self.file.rsplit('/').next().unwrap_or(&self.file)
    }

    pub fn mode(&self, mode: ThinkingMode) -> Option<&ModeCurve> {
        self.modes.iter().find(|m| m.mode == mode)
    }

    #[cfg(test)]
    fn cell(&self, mode: ThinkingMode, k: u32) -> Option<&Cell> {
        self.mode(mode)?.cells.iter().find(|c| c.k == k)
    }
}

/// What a caller knows about a launch when it asks for its golden AL.
#[derive(Debug, Clone, PartialEq)]
pub struct Query<'a> {
    pub prefix: &'a str,
    pub method: DraftMethod,
    /// `None` when the launch does not set `draft_sample_method`.
    pub sampling: Option<DraftSampling>,
    /// Draft model id (`Inferact/MiniMax-M3-EAGLE3-GQA`), if any.
    pub draft_model: Option<&'a str>,
    pub mode: ThinkingMode,
    pub k: u32,
}

/// Why no curve applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoCurve {
    /// No curve file for this model prefix.
    UnknownPrefix { prefix: String },
    /// Curves exist for the prefix, none for this draft method.
    NoMethod {
        prefix: String,
        method: DraftMethod,
        available: Vec<DraftMethod>,
    },
    /// No curve for this draft head (`…-GQA` versus the plain head).
    NoVariant {
        prefix: String,
        variant: Option<String>,
        available: Vec<Option<String>>,
    },
    /// No curve collected with this DSpark draft sampling.
    NoSampling {
        prefix: String,
        wanted: DraftSampling,
        available: Vec<DraftSampling>,
    },
    /// Several files claim the same identity.
    Ambiguous { files: Vec<String> },
}

/// Why the chosen curve has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoCell {
    /// The thinking mode was not collected (e.g. `thinking_off` on glm5.2).
    Mode {
        mode: ThinkingMode,
        available: Vec<ThinkingMode>,
    },
    /// The draft length was not collected.
    DraftLength {
        mode: ThinkingMode,
        k: u32,
        available: Vec<u32>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Lookup<'a> {
    Found { curve: &'a Curve, cell: &'a Cell },
    NoCurve(NoCurve),
    NoCell { curve: &'a Curve, missing: NoCell },
}

impl Lookup<'_> {
    /// The golden AL, when there is one.
    pub fn al(&self) -> Option<f64> {
        match self {
            Lookup::Found { cell, .. } => Some(cell.al),
            _ => None,
        }
    }
}

/// All curves of the repository.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoldenSet {
    pub curves: Vec<Curve>,
}

impl GoldenSet {
    #[cfg(test)]
    fn new(curves: Vec<Curve>) -> Self {
        GoldenSet { curves }
    }

    /// Parses every `*.yaml` / `*.yml` of the directory (other files, such
    /// as the README, are skipped).
    pub fn parse_files<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<GoldenSet, ParseError> {
        let mut curves = Vec::new();
        for (path, bytes) in files {
            if path.ends_with(".yaml") || path.ends_with(".yml") {
                curves.push(parse(path, bytes)?);
            }
        }
        curves.sort_by(|a, b| a.file.cmp(&b.file));
        Ok(GoldenSet { curves })
    }

    /// Picks the curve (prefix → method → draft head → DSpark sampling),
    /// then the cell (thinking mode → K).
    pub fn lookup(&self, q: &Query<'_>) -> Lookup<'_> {
        match self.select(q) {
            Ok(curve) => cell_of(curve, q.mode, q.k),
            Err(no) => Lookup::NoCurve(no),
        }
    }

    /// The curve a launch uses, without looking at mode and K.
    pub(crate) fn select(&self, q: &Query<'_>) -> Result<&Curve, NoCurve> {
        let mut cands: Vec<&Curve> = self
            .curves
            .iter()
            .filter(|c| c.prefix == q.prefix)
            .collect();
        if cands.is_empty() {
            return Err(NoCurve::UnknownPrefix {
                prefix: q.prefix.to_owned(),
            });
        }

        // A checkpoint named in the draft model (dsv4 0813) picks its file's
        // method even when the launch calls it something else.
        let draft_lower = q.draft_model.map(str::to_ascii_lowercase);
        let method = draft_lower
            .as_deref()
            .and_then(|d| {
                cands.iter().find(|c| {
                    c.checkpoint
                        .as_deref()
                        .and_then(|cp| cp.rsplit('-').next())
                        .is_some_and(|tag| d.contains(tag))
                })
            })
            .map_or_else(|| q.method.clone(), |c| c.method.clone());
        let available_methods = distinct(cands.iter().map(|c| c.method.clone()));
        cands.retain(|c| c.method == method);
        if cands.is_empty() {
            return Err(NoCurve::NoMethod {
                prefix: q.prefix.to_owned(),
                method,
                available: available_methods,
            });
        }

        // The draft id's suffix names the head variant (`…-EAGLE3-GQA`).
        let variant = draft_lower.as_deref().and_then(|d| {
            cands
                .iter()
                .filter_map(|c| c.variant.as_deref())
                .find(|v| d.ends_with(&format!("-{v}")))
                .map(str::to_owned)
        });
        let available_variants = distinct(cands.iter().map(|c| c.variant.clone()));
        cands.retain(|c| c.variant == variant);
        if cands.is_empty() {
            return Err(NoCurve::NoVariant {
                prefix: q.prefix.to_owned(),
                variant,
                available: available_variants,
            });
        }

        let available_sampling = distinct(cands.iter().map(|c| c.sampling));
        match (cands.len(), q.sampling) {
            // One curve and the launch does not say: that curve.
            (1, None) => {}
            (_, wanted) => {
                let wanted = wanted.unwrap_or(DraftSampling::Greedy);
                cands.retain(|c| c.sampling == wanted);
                if cands.is_empty() {
                    return Err(NoCurve::NoSampling {
                        prefix: q.prefix.to_owned(),
                        wanted,
                        available: available_sampling,
                    });
                }
            }
        }
        match cands.as_slice() {
            [one] => Ok(one),
            many => Err(NoCurve::Ambiguous {
                files: many.iter().map(|c| c.file.clone()).collect(),
            }),
        }
    }
}

fn cell_of(curve: &Curve, mode: ThinkingMode, k: u32) -> Lookup<'_> {
    let Some(m) = curve.mode(mode) else {
        return Lookup::NoCell {
            curve,
            missing: NoCell::Mode {
                mode,
                available: curve.modes.iter().map(|m| m.mode).collect(),
            },
        };
    };
    match m.cells.iter().find(|c| c.k == k) {
        Some(cell) => Lookup::Found { curve, cell },
        None => Lookup::NoCell {
            curve,
            missing: NoCell::DraftLength {
                mode,
                k,
                available: m.cells.iter().map(|c| c.k).collect(),
            },
        },
    }
}

fn distinct<T: PartialEq>(it: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for x in it {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// Parses one curve file. `file` is its repository path; the file name
/// decides prefix, method and qualifiers.
pub(crate) fn parse(file: &str, bytes: &[u8]) -> Result<Curve, ParseError> {
    let text = yaml::utf8(file, bytes)?;
    let root = yaml::parse(file, bytes)?;
    let err = |n: &Node, m: String| ParseError::new(n.loc(file), m);
    let top = match root.as_map() {
        Some([one]) => one,
        Some(many) => {
            return Err(err(
                &root,
                format!("expected one top-level model key, found {}", many.len()),
            ));
        }
        None => {
            return Err(err(
                &root,
                format!("expected a mapping, found {}", root.kind()),
            ));
        }
    };
    let (slug_key, body) = top;
    let slug = slug_key
        .key_text()
        .ok_or_else(|| err(slug_key, "model key must be a scalar".into()))?;
    let Some(modes_map) = body.as_map() else {
        return Err(err(
            body,
            format!(
                "`{slug}` must map thinking modes to curves, found {}",
                body.kind()
            ),
        ));
    };
    let mut modes: Vec<ModeCurve> = Vec::new();
    for (mk, mv) in modes_map {
        let mode = match mk.as_str() {
            Some("thinking_on") => ThinkingMode::On,
            Some("thinking_off") => ThinkingMode::Off,
            _ => {
                return Err(err(
                    mk,
                    format!(
                        "unknown thinking mode `{}` (expected thinking_on or thinking_off)",
                        mk.key_text().unwrap_or_default()
                    ),
                ));
            }
        };
        let Some(cells_map) = mv.as_map() else {
            return Err(err(
                mv,
                format!("`{mode}` must map draft lengths to AL, found {}", mv.kind()),
            ));
        };
        let mut cells = Vec::with_capacity(cells_map.len());
        for (ck, cv) in cells_map {
            let k = ck
                .as_i64()
                .and_then(|k| u32::try_from(k).ok())
                .filter(|&k| k >= 1)
                .ok_or_else(|| {
                    err(
                        ck,
                        format!(
                            "draft length must be a positive integer, found {}",
                            ck.kind()
                        ),
                    )
                })?;
            let al = cv
                .as_f64()
                .filter(|a| a.is_finite() && *a >= 1.0)
                .ok_or_else(|| {
                    err(
                        cv,
                        format!("AL at K={k} must be a number ≥ 1, found {}", cv.kind()),
                    )
                })?;
            cells.push(Cell {
                k,
                al,
                line: ck.line,
            });
        }
        modes.push(ModeCurve {
            mode,
            line: mk.line,
            cells,
        });
    }

    let name = file.rsplit('/').next().unwrap_or(file);
    let stem = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))
        .unwrap_or(name);
    let (prefix, method, qualifiers, checkpoint) = split_name(stem);
    let header = Header::read(text);
    let sampling = if qualifiers.contains(&"probabilistic")
        || header.draft_sample_method == Some(DraftSampling::Probabilistic)
    {
        DraftSampling::Probabilistic
    } else {
        DraftSampling::Greedy
    };
    let variant = qualifiers
        .iter()
        .find(|q| q.eq_ignore_ascii_case("gqa"))
        .map(|q| q.to_ascii_lowercase());
    Ok(Curve {
        file: file.to_owned(),
        slug,
        slug_line: slug_key.line,
        prefix: prefix.to_owned(),
        method,
        sampling,
        variant,
        checkpoint,
        source_run: header.source_run,
        draft_model: header.draft_model,
        modes,
    })
}

/// `qwen3.5_mtp` → (qwen3.5, mtp, []); `minimaxm3_eagle3_gqa` → (…, [gqa]);
/// `dsv4-pro-0813-dspark` → (dsv4, dspark, [], Some("pro-0813")).
fn split_name(stem: &str) -> (&str, DraftMethod, Vec<&str>, Option<String>) {
    if stem.contains('_') {
        let mut parts = stem.split('_');
        let prefix = parts.next().unwrap_or(stem);
        let method = parts
            .next()
            .map_or(DraftMethod::Other(String::new()), DraftMethod::parse);
        return (prefix, method, parts.collect(), None);
    }
    let parts: Vec<&str> = stem.split('-').collect();
    match parts.as_slice() {
        [prefix, middle @ .., method] if !middle.is_empty() => (
            prefix,
            DraftMethod::parse(method),
            Vec::new(),
            Some(middle.join("-")),
        ),
        [prefix, method] => (prefix, DraftMethod::parse(method), Vec::new(), None),
        _ => (stem, DraftMethod::Other(String::new()), Vec::new(), None),
    }
}

#[derive(Default)]
struct Header {
    source_run: Option<String>,
    draft_sample_method: Option<DraftSampling>,
    draft_model: Option<String>,
}

impl Header {
    fn read(text: &str) -> Header {
        let mut h = Header::default();
        for line in text.lines().take_while(|l| l.trim_start().starts_with('#')) {
            let c = line.trim_start().trim_start_matches('#').trim();
            if let Some(url) = c.strip_prefix("Source GitHub Actions run:") {
                h.source_run = Some(url.trim().to_owned());
            }
            if let Some(i) = c.find("draft_sample_method=") {
                let v = &c[i + "draft_sample_method=".len()..];
                let v = v
                    .split(|ch: char| ch.is_whitespace() || ch == '|')
                    .next()
                    .unwrap_or("");
                h.draft_sample_method = DraftSampling::parse(v);
            }
            if let Some(i) = c.find("draft: ") {
                let v = &c[i + "draft: ".len()..];
                let v = v.split([')', ',', ' ']).next().unwrap_or("");
                if !v.is_empty() {
                    h.draft_model = Some(v.to_owned());
                }
            }
        }
        h
    }
}

// ---------------------------------------------------------------------
// Engine encodings of the simulated AL (§1.4).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sglang,
    Vllm,
    TrtLlm,
    Atom,
    /// The runner's `inject_synthetic_acceptance.py` (master-config
    /// `additional-settings`).
    Injector,
}

/// A defect of an encoding that makes the simulation incomplete or wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EncodingProblem {
    #[error("SGLANG_SIMULATE_ACC_METHOD is missing (needs match-expected)")]
    SglangMethodMissing,
    #[error("SGLANG_SIMULATE_ACC_METHOD is `{0}`, not match-expected")]
    SglangMethodWrong(String),
    #[error("SGLANG_SIMULATE_ACC_TOKEN_MODE is missing (needs real-draft-token)")]
    SglangTokenModeMissing,
    #[error("SGLANG_SIMULATE_ACC_TOKEN_MODE is `{0}`, not real-draft-token")]
    SglangTokenModeWrong(String),
    #[error("synthetic_acceptance_length without \"rejection_sample_method\": \"synthetic\"")]
    VllmNotSynthetic,
    #[error(
        "--spec-decode-acceptance-length and --spec-decode-acceptance-rate are mutually exclusive"
    )]
    AtomBothForms,
    #[error("--spec-decode-acceptance-rate needs the draft length K")]
    AtomRateWithoutK,
    #[error("AL {al} is outside [1, K+1] for K={k}")]
    OutOfRange { al: f64, k: u32 },
    #[error("`{key}` is `{value}`, not a number")]
    NotANumber { key: String, value: String },
    #[error("no synthetic-acceptance injector is registered for framework `{0}`")]
    NoInjector(String),
    #[error("SYNTHETIC_ACCEPTANCE=true without SYNTHETIC_ACCEPTANCE_LENGTH")]
    InjectorNoLength,
}

/// A decoded simulated AL.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulated {
    pub engine: Engine,
    /// The AL to compare with the golden value (TRT-LLM: written + 1; ATOM
    /// rate: 1 + r·K).
    pub al: f64,
    /// The number as written.
    pub written: f64,
    /// K when the encoding itself carries it.
    pub k: Option<u32>,
    /// Allowed distance from the golden value.
    pub tolerance: f64,
    /// Defects; empty when the simulation is complete.
    pub problems: Vec<EncodingProblem>,
}

impl Simulated {
    pub fn matches(&self, golden: f64) -> bool {
        (self.al - golden).abs() < self.tolerance
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// No simulation: the launch runs real acceptance.
    NotSimulated,
    Simulated(Simulated),
    /// The runner injects the golden value itself (configured injector
    /// without an explicit length).
    FromGolden {
        framework: String,
        k: Option<u32>,
        thinking: Option<ThinkingMode>,
    },
    /// An encoding is present but unusable.
    Invalid(EncodingProblem),
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    for q in ['\'', '"'] {
        if let Some(inner) = v.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner.trim();
        }
    }
    v
}

fn number(key: &str, value: &str) -> Result<f64, EncodingProblem> {
    unquote(value)
        .parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .ok_or_else(|| EncodingProblem::NotANumber {
            key: key.to_owned(),
            value: value.to_owned(),
        })
}

/// SGLang: `SGLANG_SIMULATE_ACC_LEN` with METHOD=match-expected and
/// TOKEN_MODE=real-draft-token, from one environment (script exports or an
/// srt `*_environment` block). Values may carry YAML/shell quotes.
pub fn sglang_env<'a>(env: impl IntoIterator<Item = (&'a str, &'a str)>) -> Decoded {
    let (mut len, mut method, mut mode) = (None, None, None);
    for (k, v) in env {
        match k.trim() {
            "SGLANG_SIMULATE_ACC_LEN" => len = Some(v),
            "SGLANG_SIMULATE_ACC_METHOD" => method = Some(unquote(v)),
            "SGLANG_SIMULATE_ACC_TOKEN_MODE" => mode = Some(unquote(v)),
            _ => {}
        }
    }
    let Some(len) = len else {
        return Decoded::NotSimulated;
    };
    let al = match number("SGLANG_SIMULATE_ACC_LEN", len) {
        Ok(al) => al,
        Err(p) => return Decoded::Invalid(p),
    };
    let mut problems = Vec::new();
    match method {
        None => problems.push(EncodingProblem::SglangMethodMissing),
        Some("match-expected") => {}
        Some(other) => problems.push(EncodingProblem::SglangMethodWrong(other.to_owned())),
    }
    match mode {
        None => problems.push(EncodingProblem::SglangTokenModeMissing),
        Some("real-draft-token") => {}
        Some(other) => problems.push(EncodingProblem::SglangTokenModeWrong(other.to_owned())),
    }
    Decoded::Simulated(Simulated {
        engine: Engine::Sglang,
        al,
        written: al,
        k: None,
        tolerance: AL_TOLERANCE,
        problems,
    })
}

/// The fields of a vLLM `--speculative-config` JSON that matter here.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VllmSpecConfig {
    pub method: Option<String>,
    pub model: Option<String>,
    pub k: Option<u32>,
    pub draft_sample_method: Option<String>,
    pub rejection_sample_method: Option<String>,
    pub synthetic_acceptance_length: Option<f64>,
}

impl VllmSpecConfig {
    /// Reads the JSON text (after shell variables are resolved).
    pub fn parse(json: &str) -> Result<VllmSpecConfig, String> {
        let v: serde_json::Value = serde_json::from_str(unquote(json))
            .map_err(|e| format!("speculative config is not JSON: {e}"))?;
        let obj = v
            .as_object()
            .ok_or_else(|| "speculative config is not a JSON object".to_owned())?;
        let text = |k: &str| obj.get(k).and_then(|x| x.as_str()).map(str::to_owned);
        let num = |k: &str| {
            obj.get(k).and_then(|x| {
                x.as_f64()
                    .or_else(|| x.as_str().and_then(|s| s.trim().parse::<f64>().ok()))
            })
        };
        let k = match num("num_speculative_tokens") {
            Some(f) if f.fract() == 0.0 && (0.0..=1024.0).contains(&f) => Some(f as u32),
            Some(f) => return Err(format!("num_speculative_tokens is {f}, not a draft length")),
            None => None,
        };
        Ok(VllmSpecConfig {
            method: text("method"),
            model: text("model"),
            k,
            draft_sample_method: text("draft_sample_method"),
            rejection_sample_method: text("rejection_sample_method"),
            synthetic_acceptance_length: num("synthetic_acceptance_length"),
        })
    }

    /// vLLM simulates only with `"rejection_sample_method": "synthetic"` and
    /// `"synthetic_acceptance_length"` together.
    pub fn decoded(&self) -> Decoded {
        let synthetic = self.rejection_sample_method.as_deref() == Some("synthetic");
        match self.synthetic_acceptance_length {
            None => Decoded::NotSimulated,
            Some(al) => Decoded::Simulated(Simulated {
                engine: Engine::Vllm,
                al,
                written: al,
                k: self.k,
                tolerance: AL_TOLERANCE,
                problems: if synthetic {
                    Vec::new()
                } else {
                    vec![EncodingProblem::VllmNotSynthetic]
                },
            }),
        }
    }

    pub fn sampling(&self) -> Option<DraftSampling> {
        self.draft_sample_method
            .as_deref()
            .and_then(DraftSampling::parse)
    }
}

/// TRT-LLM: `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS` counts accepted
/// draft tokens, so the AL is the value + 1.
pub fn trtllm_env(value: &str) -> Decoded {
    match number("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS", value) {
        Ok(v) => Decoded::Simulated(Simulated {
            engine: Engine::TrtLlm,
            al: v + 1.0,
            written: v,
            k: None,
            tolerance: AL_TOLERANCE,
            problems: Vec::new(),
        }),
        Err(p) => Decoded::Invalid(p),
    }
}

/// ATOM: `--spec-decode-acceptance-length <AL>` or the exclusive
/// `--spec-decode-acceptance-rate r` with AL = 1 + r·K; AL ∈ [1, K+1].
pub fn atom_args(length: Option<&str>, rate: Option<&str>, k: Option<u32>) -> Decoded {
    let (al, written, tolerance) = match (length, rate) {
        (None, None) => return Decoded::NotSimulated,
        (Some(_), Some(_)) => return Decoded::Invalid(EncodingProblem::AtomBothForms),
        (Some(l), None) => match number("--spec-decode-acceptance-length", l) {
            Ok(al) => (al, al, AL_TOLERANCE),
            Err(p) => return Decoded::Invalid(p),
        },
        (None, Some(r)) => {
            let r = match number("--spec-decode-acceptance-rate", r) {
                Ok(r) => r,
                Err(p) => return Decoded::Invalid(p),
            };
            let Some(k) = k else {
                return Decoded::Invalid(EncodingProblem::AtomRateWithoutK);
            };
            (1.0 + r * f64::from(k), r, ATOM_RATE_TOLERANCE)
        }
    };
    let mut problems = Vec::new();
    if let Some(k) = k
        && !(1.0..=f64::from(k) + 1.0).contains(&al)
    {
        problems.push(EncodingProblem::OutOfRange { al, k });
    }
    Decoded::Simulated(Simulated {
        engine: Engine::Atom,
        al,
        written,
        k,
        tolerance,
        problems,
    })
}

/// Where a registered injector takes the length from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthSource {
    /// Only from `SYNTHETIC_ACCEPTANCE_LENGTH`.
    Explicit,
    /// From the golden curve when no explicit length is given.
    GoldenCurve,
}

/// One registered synthetic-acceptance injector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injector {
    pub framework: String,
    pub length: LengthSource,
}

/// The reference repository's injectors: `dynamo-vllm` and `dynamo-sglang`,
/// both needing an explicit length (the fallback reference file does not
/// exist at HEAD).
pub fn default_injectors() -> Vec<Injector> {
    ["dynamo-vllm", "dynamo-sglang"]
        .into_iter()
        .map(|f| Injector {
            framework: f.to_owned(),
            length: LengthSource::Explicit,
        })
        .collect()
}

/// Runner-injected settings: `KEY=VALUE` items of a master config's
/// `additional-settings` (`SYNTHETIC_ACCEPTANCE`, `SYNTHETIC_ACCEPTANCE_LENGTH`,
/// `NUM_SPEC_TOKENS`, `THINKING_MODE`, `EVAL_ONLY`).
pub fn runner_injected<'a>(
    framework: &str,
    settings: impl IntoIterator<Item = &'a str>,
    injectors: &[Injector],
) -> Decoded {
    let (mut on, mut len, mut k, mut thinking, mut eval_only) = (false, None, None, None, false);
    for item in settings {
        let Some((key, value)) = item.split_once('=') else {
            continue;
        };
        let value = unquote(value);
        match key.trim() {
            "SYNTHETIC_ACCEPTANCE" => on = value == "true",
            "SYNTHETIC_ACCEPTANCE_LENGTH" => len = Some(value),
            "NUM_SPEC_TOKENS" => k = value.parse::<u32>().ok(),
            "THINKING_MODE" => thinking = thinking_signal("THINKING_MODE", value),
            "EVAL_ONLY" => eval_only = value == "true",
            _ => {}
        }
    }
    // The injector does nothing unless the flag is exactly `true`, and never
    // on eval-only runs.
    if !on || eval_only {
        return Decoded::NotSimulated;
    }
    let Some(injector) = injectors.iter().find(|i| i.framework == framework) else {
        return Decoded::Invalid(EncodingProblem::NoInjector(framework.to_owned()));
    };
    match (len, injector.length) {
        (Some(l), _) => match number("SYNTHETIC_ACCEPTANCE_LENGTH", l) {
            Ok(al) => Decoded::Simulated(Simulated {
                engine: Engine::Injector,
                al,
                written: al,
                k,
                tolerance: AL_TOLERANCE,
                problems: Vec::new(),
            }),
            Err(p) => Decoded::Invalid(p),
        },
        (None, LengthSource::GoldenCurve) => Decoded::FromGolden {
            framework: framework.to_owned(),
            k,
            thinking,
        },
        (None, LengthSource::Explicit) => Decoded::Invalid(EncodingProblem::InjectorNoLength),
    }
}

/// An explicit thinking-mode signal in a launch setting (§1.3 step 3), or
/// `None` when the setting says nothing about thinking.
pub fn thinking_signal(key: &str, value: &str) -> Option<ThinkingMode> {
    let key = key.trim().trim_start_matches('-');
    let value = unquote(value);
    let word = |v: &str| match v.to_ascii_lowercase().as_str() {
        "enabled" | "on" | "true" | "1" => Some(ThinkingMode::On),
        "disabled" | "off" | "false" | "0" => Some(ThinkingMode::Off),
        _ => None,
    };
    match key {
        "default-chat-template-kwargs"
        | "default_chat_template_kwargs"
        | "chat_template_kwargs" => {
            let v: serde_json::Value = serde_json::from_str(value).ok()?;
            for k in ["enable_thinking", "thinking"] {
                if let Some(b) = v.get(k).and_then(serde_json::Value::as_bool) {
                    return Some(if b {
                        ThinkingMode::On
                    } else {
                        ThinkingMode::Off
                    });
                }
            }
            v.get("thinking_mode")
                .and_then(|m| m.as_str())
                .and_then(word)
        }
        "DYN_DEFAULT_THINKING_MODE" | "dyn-default-thinking-mode" | "THINKING_MODE" => word(value),
        "SGLANG_ENABLE_THINKING" => match value {
            "1" => Some(ThinkingMode::On),
            "0" => Some(ThinkingMode::Off),
            _ => None,
        },
        "AIPERF_EXTRA_INPUTS" => {
            let compact: String = value
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '"')
                .collect();
            if compact.contains("thinking:false") {
                Some(ThinkingMode::Off)
            } else if compact.contains("thinking:true") {
                Some(ThinkingMode::On)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// On and off signals in the same launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the launch carries both thinking-on and thinking-off signals")]
pub struct ThinkingConflict;

/// The thinking mode of a launch: `thinking_on` unless an explicit signal
/// says off; conflicting signals are for a person to judge.
pub fn resolve_thinking(
    signals: impl IntoIterator<Item = ThinkingMode>,
) -> Result<ThinkingMode, ThinkingConflict> {
    let (mut on, mut off) = (false, false);
    for s in signals {
        match s {
            ThinkingMode::On => on = true,
            ThinkingMode::Off => off = true,
        }
    }
    match (on, off) {
        (true, true) => Err(ThinkingConflict),
        (_, true) => Ok(ThinkingMode::Off),
        _ => Ok(ThinkingMode::On),
    }
}

#[cfg(feature = "fuzzing")]
/// Where a curve file's cell is, for messages (`file:line`).
pub(crate) fn cell_loc(curve: &Curve, cell: &Cell) -> super::Loc {
    super::Loc::new(&curve.file, cell.line, 5)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTP: &str = "# Source GitHub Actions run: https://x/runs/1\nm:\n  thinking_on:\n    1: 1.5\n    3: 2.5\n";

    #[test]
    fn parses_positions_and_header() {
        let c = parse("golden_al_distribution/foo_mtp.yaml", MTP.as_bytes()).unwrap();
        assert_eq!(
            (c.prefix.as_str(), c.method.clone()),
            ("foo", DraftMethod::Mtp)
        );
        assert_eq!(c.source_run.as_deref(), Some("https://x/runs/1"));
        assert_eq!(c.slug_line, 2);
        assert_eq!(
            c.cell(ThinkingMode::On, 3).map(|c| (c.al, c.line)),
            Some((2.5, 5))
        );
    }

    #[test]
    fn bad_cells_are_located() {
        let e = parse("g/x_mtp.yaml", b"m:\n  thinking_on:\n    one: 1.5\n").unwrap_err();
        assert_eq!((e.loc.line, e.loc.column), (3, 5));
        let e = parse("g/x_mtp.yaml", b"m:\n  thinking_maybe:\n    1: 1.5\n").unwrap_err();
        assert_eq!(e.loc.line, 2);
        let e = parse("g/x_mtp.yaml", b"a: {}\nb: {}\n").unwrap_err();
        assert_eq!(e.loc.line, 1);
    }

    #[test]
    fn misses_are_precise() {
        let set = GoldenSet::new(vec![parse("g/foo_mtp.yaml", MTP.as_bytes()).unwrap()]);
        let q = |prefix, method, mode, k| Query {
            prefix,
            method,
            sampling: None,
            draft_model: None,
            mode,
            k,
        };
        assert!(matches!(
            set.lookup(&q("bar", DraftMethod::Mtp, ThinkingMode::On, 3)),
            Lookup::NoCurve(NoCurve::UnknownPrefix { .. })
        ));
        assert!(matches!(
            set.lookup(&q("foo", DraftMethod::Eagle3, ThinkingMode::On, 3)),
            Lookup::NoCurve(NoCurve::NoMethod { .. })
        ));
        assert!(matches!(
            set.lookup(&q("foo", DraftMethod::Mtp, ThinkingMode::Off, 3)),
            Lookup::NoCell {
                missing: NoCell::Mode { .. },
                ..
            }
        ));
        match set.lookup(&q("foo", DraftMethod::Mtp, ThinkingMode::On, 2)) {
            Lookup::NoCell {
                missing: NoCell::DraftLength { available, .. },
                ..
            } => assert_eq!(available, vec![1, 3]),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            set.lookup(&q("foo", DraftMethod::Mtp, ThinkingMode::On, 3))
                .al(),
            Some(2.5)
        );
    }

    #[test]
    fn encodings() {
        let Decoded::Simulated(s) = sglang_env([
            ("SGLANG_SIMULATE_ACC_LEN", "'3.39'"),
            ("SGLANG_SIMULATE_ACC_METHOD", "match-expected"),
        ]) else {
            panic!()
        };
        assert_eq!(s.al, 3.39);
        assert_eq!(s.problems, vec![EncodingProblem::SglangTokenModeMissing]);
        let Decoded::Simulated(t) = trtllm_env("1.78") else {
            panic!()
        };
        assert!(t.matches(2.78) && !t.matches(2.83));
        let Decoded::Simulated(a) = atom_args(None, Some("0.663"), Some(3)) else {
            panic!()
        };
        assert!(a.matches(2.99));
        assert_eq!(
            atom_args(Some("3"), Some("0.5"), Some(3)),
            Decoded::Invalid(EncodingProblem::AtomBothForms)
        );
        let Decoded::Simulated(o) = atom_args(Some("5.5"), None, Some(3)) else {
            panic!()
        };
        assert_eq!(
            o.problems,
            vec![EncodingProblem::OutOfRange { al: 5.5, k: 3 }]
        );
        let v = VllmSpecConfig::parse(
            r#"{"method":"eagle3","num_speculative_tokens":4,"synthetic_acceptance_length":3.24}"#,
        )
        .unwrap();
        let Decoded::Simulated(vs) = v.decoded() else {
            panic!()
        };
        assert_eq!((vs.al, vs.k), (3.24, Some(4)));
        assert_eq!(vs.problems, vec![EncodingProblem::VllmNotSynthetic]);
    }

    #[test]
    fn injector_rules() {
        let inj = default_injectors();
        let on = [
            "SYNTHETIC_ACCEPTANCE=true",
            "SYNTHETIC_ACCEPTANCE_LENGTH=3.84",
        ];
        assert!(
            matches!(runner_injected("dynamo-vllm", on, &inj), Decoded::Simulated(s) if s.al == 3.84)
        );
        assert_eq!(
            runner_injected("dynamo-trt", on, &inj),
            Decoded::Invalid(EncodingProblem::NoInjector("dynamo-trt".into()))
        );
        assert_eq!(
            runner_injected("dynamo-sglang", ["SYNTHETIC_ACCEPTANCE=true"], &inj),
            Decoded::Invalid(EncodingProblem::InjectorNoLength)
        );
        assert_eq!(
            runner_injected(
                "dynamo-vllm",
                [
                    "SYNTHETIC_ACCEPTANCE=true",
                    "EVAL_ONLY=true",
                    "SYNTHETIC_ACCEPTANCE_LENGTH=2"
                ],
                &inj
            ),
            Decoded::NotSimulated
        );
        let golden = [Injector {
            framework: "sglang".into(),
            length: LengthSource::GoldenCurve,
        }];
        assert!(matches!(
            runner_injected(
                "sglang",
                ["SYNTHETIC_ACCEPTANCE=true", "NUM_SPEC_TOKENS=5"],
                &golden
            ),
            Decoded::FromGolden { k: Some(5), .. }
        ));
    }

    #[test]
    fn thinking() {
        assert_eq!(
            thinking_signal(
                "--default-chat-template-kwargs",
                r#"'{"enable_thinking": false}'"#
            ),
            Some(ThinkingMode::Off)
        );
        assert_eq!(
            thinking_signal("DYN_DEFAULT_THINKING_MODE", "disabled"),
            Some(ThinkingMode::Off)
        );
        assert_eq!(
            thinking_signal("SGLANG_ENABLE_THINKING", "'1'"),
            Some(ThinkingMode::On)
        );
        assert_eq!(
            thinking_signal("AIPERF_EXTRA_INPUTS", "thinking: false"),
            Some(ThinkingMode::Off)
        );
        assert_eq!(thinking_signal("TP", "8"), None);
        assert_eq!(resolve_thinking([]), Ok(ThinkingMode::On));
        assert_eq!(
            resolve_thinking([ThinkingMode::On, ThinkingMode::Off]),
            Err(ThinkingConflict)
        );
    }
}
