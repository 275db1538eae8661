//! Staging requests to the results repository and its callbacks
//! (`docs/contracts.md` §4, `docs/reference-automation.md` §4.3).
use crate::ids::{CommentId, PrNumber, RunId};
use serde_json::{Map, Value, json};
use std::fmt;

/// One staging request; at-least-once, so it carries its idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageRequest {
    pub source_repository: String,
    pub pr: PrNumber,
    pub run: RunId,
    pub attempt: u64,
    /// `YYYY-MM-DD` of the run's creation (first attempt, UTC).
    pub run_date: String,
    pub requested_by: String,
    pub reply: CommentId,
}

impl StageRequest {
    /// Run, attempt and reply comment: the same request sent twice is the
    /// same staging.
    pub fn idempotency_key(&self) -> String {
        format!("{}:{}:{}", self.run, self.attempt, self.reply)
    }

    /// The `repository_dispatch` body (every value a string, as the
    /// results repository's workflow expects).
    pub fn dispatch_body(&self, event_type: &str) -> Value {
        json!({
            "event_type": event_type,
            "client_payload": {
                "source-repository": self.source_repository,
                "pr-number": self.pr.to_string(),
                "run-id": self.run.to_string(),
                "run-attempt": self.attempt.to_string(),
                "run-date": self.run_date,
                "requested-by": self.requested_by,
                "comment-id": self.reply.to_string(),
                "idempotency-key": self.idempotency_key(),
            }
        })
    }
}

/// What the results repository reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    Started,
    Completed { succeeded: bool },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callback {
    pub progress: Progress,
    pub pr: PrNumber,
    pub run: RunId,
    pub run_date: String,
    pub requested_by: String,
    pub reply: Option<CommentId>,
    pub app_run_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct CallbackError(pub String);

impl fmt::Display for CallbackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid staging callback: {}", self.0)
    }
}

fn field<'a>(p: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    p.get(k).and_then(Value::as_str)
}

fn numeric(p: &Map<String, Value>, k: &str) -> Result<u64, CallbackError> {
    let v = p
        .get(k)
        .ok_or_else(|| CallbackError(format!("`{k}` is missing")))?;
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .ok_or_else(|| CallbackError(format!("`{k}` is not a number")))
}

/// Validates a `stage-results-started` / `-completed` dispatch; only the
/// configured results repository may send one.
pub fn parse_callback(
    event_type: &str,
    payload: &Map<String, Value>,
    results_repository: &str,
) -> Result<Option<Callback>, CallbackError> {
    let progress = match event_type {
        "stage-results-started" => Progress::Started,
        "stage-results-completed" => {
            let succeeded = match field(payload, "stage-succeeded") {
                Some("true") => true,
                Some("false") => false,
                _ => {
                    return Err(CallbackError(
                        "`stage-succeeded` must be \"true\" or \"false\"".into(),
                    ));
                }
            };
            Progress::Completed { succeeded }
        }
        _ => return Ok(None),
    };
    if field(payload, "source-repository") != Some(results_repository) {
        return Err(CallbackError(format!(
            "`source-repository` is not {results_repository}"
        )));
    }
    let run_date = field(payload, "run-date").unwrap_or("");
    let valid_date = chrono::NaiveDate::parse_from_str(run_date, "%Y-%m-%d").is_ok();
    if !valid_date {
        return Err(CallbackError("`run-date` is not YYYY-MM-DD".into()));
    }
    let requested_by = field(payload, "requested-by").unwrap_or("");
    if requested_by.is_empty()
        || !requested_by
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(CallbackError("`requested-by` is not a GitHub login".into()));
    }
    let reply = match payload.get("comment-id") {
        None => None,
        Some(_) => Some(CommentId(numeric(payload, "comment-id")?)),
    };
    let app_run_url = match payload.get("app-run-id") {
        None => None,
        Some(_) => Some(format!(
            "https://github.com/{results_repository}/actions/runs/{}",
            numeric(payload, "app-run-id")?
        )),
    };
    Ok(Some(Callback {
        progress,
        pr: PrNumber(numeric(payload, "pr-number")?),
        run: RunId(numeric(payload, "run-id")?),
        run_date: run_date.to_owned(),
        requested_by: requested_by.to_owned(),
        reply,
        app_run_url,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn the_dispatch_carries_every_field_as_a_string() {
        let r = StageRequest {
            source_repository: "InferenceX/InferenceX".into(),
            pr: PrNumber(3912),
            run: RunId(38614048439),
            attempt: 1,
            run_date: "2026-10-14".into(),
            requested_by: "nvpohanh".into(),
            reply: CommentId(99),
        };
        let b = r.dispatch_body("stage-results");
        assert_eq!(b["event_type"], "stage-results");
        assert_eq!(b["client_payload"]["run-id"], "38614048439");
        assert_eq!(b["client_payload"]["idempotency-key"], "38614048439:1:99");
    }

    #[test]
    fn callbacks_are_validated() {
        let ok = payload(json!({
            "source-repository": "SemiAnalysisAI/InferenceX-app",
            "pr-number": "12", "run-id": "5", "run-date": "2026-10-14",
            "requested-by": "nv-dev", "comment-id": "77", "app-run-id": 9,
            "stage-succeeded": "true"
        }));
        let c = parse_callback(
            "stage-results-completed",
            &ok,
            "SemiAnalysisAI/InferenceX-app",
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.progress, Progress::Completed { succeeded: true });
        assert_eq!(c.reply, Some(CommentId(77)));
        assert_eq!(
            c.app_run_url.as_deref(),
            Some("https://github.com/SemiAnalysisAI/InferenceX-app/actions/runs/9")
        );
        assert!(
            parse_callback("something-else", &ok, "SemiAnalysisAI/InferenceX-app")
                .unwrap()
                .is_none()
        );
        let mut bad = ok.clone();
        bad.insert("source-repository".into(), json!("evil/repo"));
        assert!(
            parse_callback(
                "stage-results-started",
                &bad,
                "SemiAnalysisAI/InferenceX-app"
            )
            .is_err()
        );
        let mut bad = ok.clone();
        bad.insert("requested-by".into(), json!("a b"));
        assert!(
            parse_callback(
                "stage-results-started",
                &bad,
                "SemiAnalysisAI/InferenceX-app"
            )
            .is_err()
        );
        let mut bad = ok.clone();
        bad.insert("stage-succeeded".into(), json!("yes"));
        assert!(
            parse_callback(
                "stage-results-completed",
                &bad,
                "SemiAnalysisAI/InferenceX-app"
            )
            .is_err()
        );
        let mut bad = ok;
        bad.insert("run-date".into(), json!("14/10/2026"));
        assert!(
            parse_callback(
                "stage-results-started",
                &bad,
                "SemiAnalysisAI/InferenceX-app"
            )
            .is_err()
        );
    }
}
