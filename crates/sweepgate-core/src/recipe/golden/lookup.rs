//! The set of golden curves and its lookup: which curve a launch uses and
//! which cell, or precisely why there is none.

use super::curve::{Cell, Curve, DraftMethod, DraftSampling, ThinkingMode, parse};
use crate::recipe::ParseError;

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

fn list<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn sampling_name(s: DraftSampling) -> &'static str {
    match s {
        DraftSampling::Greedy => "greedy",
        DraftSampling::Probabilistic => "probabilistic",
    }
}

/// User-facing text (never Rust debug output in a reason).
impl std::fmt::Display for NoCurve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoCurve::UnknownPrefix { prefix } => write!(f, "no golden curve for model `{prefix}`"),
            NoCurve::NoMethod {
                prefix,
                method,
                available,
            } => write!(
                f,
                "no golden `{prefix}` curve for draft method {method} (curves exist for {})",
                list(available)
            ),
            NoCurve::NoVariant {
                prefix,
                variant,
                available,
            } => {
                let name =
                    |v: &Option<String>| v.clone().unwrap_or_else(|| "the plain head".into());
                write!(
                    f,
                    "no golden `{prefix}` curve for draft head {} (curves exist for {})",
                    name(variant),
                    available.iter().map(name).collect::<Vec<_>>().join(", ")
                )
            }
            NoCurve::NoSampling {
                prefix,
                wanted,
                available,
            } => write!(
                f,
                "no golden `{prefix}` curve collected with {} draft sampling (curves exist for {})",
                sampling_name(*wanted),
                available
                    .iter()
                    .map(|s| sampling_name(*s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            NoCurve::Ambiguous { files } => {
                write!(f, "several golden curves match ({})", files.join(", "))
            }
        }
    }
}

impl std::fmt::Display for NoCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoCell::Mode { mode, available } => {
                write!(f, "no {mode} row (collected: {})", list(available))
            }
            NoCell::DraftLength { mode, k, available } => {
                write!(
                    f,
                    "no {mode} value at K={k} (collected K: {})",
                    list(available)
                )
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::golden::MTP;

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
}
