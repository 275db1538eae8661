//! Golden curve files: thinking modes, draft methods and sampling, the
//! curve model, and parsing a file with its name and header comments.

use std::fmt;

use crate::recipe::ParseError;
use crate::recipe::yaml::{self, Node};

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

/// Parses one curve file. `file` is its repository path; the file name
/// decides prefix, method and qualifiers.
pub(crate) fn parse(file: &str, bytes: &[u8]) -> Result<Curve, ParseError> {
    let text = yaml::utf8(file, bytes)?;
    let root = yaml::parse_plain(file, bytes)?;
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
                line: ck.line(),
            });
        }
        modes.push(ModeCurve {
            mode,
            line: mk.line(),
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
        slug_line: slug_key.line(),
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

/// Where a curve file's cell is, for messages (`file:line`).
#[cfg(feature = "fuzzing")]
pub(crate) fn cell_loc(curve: &Curve, cell: &Cell) -> crate::recipe::Loc {
    crate::recipe::Loc::new(&curve.file, cell.line, 5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::golden::MTP;

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
}
