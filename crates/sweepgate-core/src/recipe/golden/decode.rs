//! Engine encodings of the simulated AL (§1.4): SGLang, vLLM, TRT-LLM, ATOM
//! and runner injectors, decoded from launch settings; thinking signals.

use super::curve::{DraftSampling, ThinkingMode};

/// Pinned and golden AL agree when they differ by less than this.
pub(crate) const AL_TOLERANCE: f64 = 0.005;
/// ATOM's rate form is computed with awk, so it gets a wider tolerance.
pub(crate) const ATOM_RATE_TOLERANCE: f64 = 0.01;

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

#[cfg(test)]
mod tests {
    use super::*;

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
