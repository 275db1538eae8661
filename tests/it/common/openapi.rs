//! Checks what went over the wire between sweepgate and the sandbox against
//! GitHub's own OpenAPI description (`tests/data/github/openapi/`): every
//! JSON request body against its operation's request schema, every JSON
//! answer against the schema of its status. OpenAPI 3.0's `nullable` is
//! turned into JSON Schema's `null` type; the rest is the description as
//! published, validated by the `jsonschema` crate.
#![allow(dead_code)]

use serde_json::{Map, Value, json};
use std::sync::OnceLock;
use sweepgate_sandbox::RecordedRequest;

struct Operation {
    method: String,
    template: String,
    /// Literal characters of the template: the most specific match wins.
    literal: usize,
    pattern: regex::Regex,
    op: Value,
}

struct Description {
    /// `{"components": …}` with `nullable` converted: `$ref`s resolve here.
    components: Value,
    operations: Vec<Operation>,
}

/// OpenAPI 3.0 → JSON Schema: `nullable: true` allows `null`.
fn convert(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out: Map<String, Value> = m
                .iter()
                .filter(|(k, _)| *k != "nullable")
                .map(|(k, v)| (k.clone(), convert(v)))
                .collect();
            if m.get("nullable") == Some(&Value::Bool(true)) {
                let inner = Value::Object(std::mem::take(&mut out));
                return json!({ "anyOf": [inner, { "type": "null" }] });
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(convert).collect()),
        other => other.clone(),
    }
}

fn description() -> &'static Description {
    static D: OnceLock<Description> = OnceLock::new();
    D.get_or_init(|| {
        let path = super::data_dir().join("github/openapi/api.github.com.sandbox.json");
        let spec: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let mut operations = Vec::new();
        for (template, ops) in spec["paths"].as_object().unwrap() {
            let segs: Vec<&str> = template.trim_start_matches('/').split('/').collect();
            let last = segs.len() - 1;
            let re = segs
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    if s.starts_with('{') {
                        // A file path, a ref or a branch may hold slashes.
                        let slashes = matches!(*s, "{path}" | "{ref}" | "{basehead}" | "{branch}");
                        if i == last && slashes { ".+" } else { "[^/]+" }.to_owned()
                    } else {
                        regex::escape(s)
                    }
                })
                .collect::<Vec<_>>()
                .join("/");
            let literal = segs
                .iter()
                .filter(|s| !s.starts_with('{'))
                .map(|s| s.len())
                .sum();
            for (method, op) in ops.as_object().unwrap() {
                operations.push(Operation {
                    method: method.to_ascii_uppercase(),
                    template: template.clone(),
                    literal,
                    pattern: regex::Regex::new(&format!("^/{re}$")).unwrap(),
                    op: op.clone(),
                });
            }
        }
        Description {
            components: json!({ "components": convert(&spec["components"]) }),
            operations,
        }
    })
}

fn operation(method: &str, path: &str) -> Option<&'static Operation> {
    description()
        .operations
        .iter()
        .filter(|o| o.method == method && o.pattern.is_match(path))
        .max_by_key(|o| o.literal)
}

/// Validates `value` against `schema` (an OpenAPI 3.0 schema of the
/// description); the errors, each with where it is.
fn errors(schema: &Value, value: &Value) -> Vec<String> {
    let mut root = description().components.clone();
    root["allOf"] = json!([convert(schema)]);
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(&root)
        .unwrap_or_else(|e| panic!("the description's schema does not compile: {e}"));
    validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .take(5)
        .collect()
}

/// Every mismatch between the recorded traffic and the description.
pub fn mismatches(requests: &[RecordedRequest]) -> Vec<String> {
    let mut out = Vec::new();
    for r in requests {
        if r.path.starts_with("/_sandbox/") || r.fault.is_some() {
            continue;
        }
        let what = format!("{} {} → {}", r.method, r.path, r.status);
        let Some(op) = operation(&r.method, &r.path) else {
            out.push(format!("{what}: no such operation in GitHub's description"));
            continue;
        };
        if let Some(body) = &r.body
            && let Some(schema) = op
                .op
                .pointer("/requestBody/content/application~1json/schema")
        {
            for e in errors(schema, body) {
                out.push(format!("{what}: request ({}): {e}", op.template));
            }
        }
        let responses = &op.op["responses"];
        let answer = responses
            .get(r.status.to_string())
            .or_else(|| responses.get("default"));
        let Some(answer) = answer else {
            // The description leaves out many error answers (a 404 for a
            // run that does not exist); a success it does not list is drift.
            if r.status < 400 {
                out.push(format!(
                    "{what}: status {} is not an answer of {} {}",
                    r.status, r.method, op.template
                ));
            }
            continue;
        };
        if let (Some(body), Some(schema)) = (
            &r.response,
            answer.pointer("/content/application~1json/schema"),
        ) && (200..300).contains(&r.status)
        {
            for e in errors(schema, body) {
                out.push(format!("{what}: answer ({}): {e}", op.template));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}
