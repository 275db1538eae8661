//! SARIF 2.1.0 output for code-scanning tools: with a baseline, each
//! result carries `partialFingerprints` (sweepgate's fingerprint, which
//! survives line shifts and renames) and `baselineState` (`new` or
//! `unchanged`), as GitHub code scanning reads them.

use serde_json::{Value, json};

use super::baseline::Judged;
use super::{Finding, Severity, rule_description, rules};

/// The key of sweepgate's fingerprint in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "sweepgate/v1";

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// One SARIF log with one run: every rule in `tool.driver.rules`, one result per finding.
pub fn to_sarif(findings: &[Finding]) -> Value {
    let pairs: Vec<(&Finding, Option<&Judged>)> = findings.iter().map(|f| (f, None)).collect();
    log(&pairs)
}

/// [`to_sarif`] of judged findings, with fingerprints and baseline states.
pub fn to_sarif_judged(judged: &[Judged]) -> Value {
    let pairs: Vec<(&Finding, Option<&Judged>)> =
        judged.iter().map(|j| (&j.finding, Some(j))).collect();
    log(&pairs)
}

fn log(findings: &[(&Finding, Option<&Judged>)]) -> Value {
    let mut ids: Vec<&'static str> = vec!["L00"];
    ids.extend(rules().iter().map(|r| r.id));
    let driver_rules: Vec<Value> = ids
        .iter()
        .filter_map(|id| {
            rule_description(id).map(|(name, desc)| {
                json!({
                    "id": id,
                    "name": name,
                    "shortDescription": { "text": desc },
                    "fullDescription": { "text": desc },
                    "helpUri": "https://github.com/SemiAnalysisAI/InferenceX",
                })
            })
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|(f, judged)| {
            let mut text = f.message.clone();
            if let Some(fix) = &f.fix {
                text.push_str(&format!(" (fix: {fix})"));
            }
            let mut result = json!({
                "ruleId": f.rule,
                "ruleIndex": ids.iter().position(|i| *i == f.rule).unwrap_or(0),
                "level": level(f.severity),
                "message": { "text": text },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": f.file, "uriBaseId": "%SRCROOT%" },
                        "region": { "startLine": f.line.max(1) }
                    }
                }]
            });
            if let Some(j) = judged {
                result["partialFingerprints"] = json!({ FINGERPRINT_KEY: j.fingerprint });
                result["baselineState"] = json!(j.baseline.as_str());
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "sweepgate-recipe-lint",
                "informationUri": "https://github.com/SemiAnalysisAI/InferenceX",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": driver_rules,
            }},
            "results": results,
        }]
    })
}
