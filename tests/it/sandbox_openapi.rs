//! The check of sandbox traffic against GitHub's OpenAPI description
//! (`common::openapi`, run by every transcript's `finish`) catches drift:
//! a missing required field, a value outside an enum, a null where the
//! description has none, a request body GitHub would refuse, an operation
//! GitHub does not have.
use crate::common::openapi::mismatches;
use serde_json::{Value, json};
use sweepgate_sandbox::RecordedRequest;

fn req(
    method: &str,
    path: &str,
    status: u16,
    body: Option<Value>,
    response: Option<Value>,
) -> RecordedRequest {
    RecordedRequest {
        seq: 1,
        method: method.into(),
        path: path.into(),
        query: None,
        body,
        status,
        auth: "token".into(),
        caller: None,
        fault: None,
        response,
    }
}

fn status(state: &str, description: Option<&str>) -> Value {
    json!({
        "url": "https://api.github.com/repos/o/r/statuses/abc",
        "avatar_url": null,
        "id": 1,
        "node_id": "SC_1",
        "state": state,
        "description": description,
        "target_url": null,
        "context": "codeowner-signoff-verify",
        "created_at": "2026-10-14T09:00:00Z",
        "updated_at": "2026-10-14T09:00:00Z",
        "creator": null,
    })
}

#[test]
fn drift_from_githubs_description_is_caught() {
    let path = "/repos/o/r/statuses/0123456789abcdef0123456789abcdef01234567";
    let good = req(
        "POST",
        path,
        201,
        Some(json!({ "state": "success", "context": "codeowner-signoff-verify" })),
        Some(status("success", Some("ok"))),
    );
    assert_eq!(
        mismatches(std::slice::from_ref(&good)),
        Vec::<String>::new()
    );

    // A request body GitHub refuses: a state outside the enum.
    let mut bad_request = good.clone();
    bad_request.body = Some(json!({ "state": "passed" }));
    // An answer missing a required field, with a null where none is allowed.
    let mut missing = good.clone();
    let mut answer = status("success", None);
    answer.as_object_mut().unwrap().remove("context");
    answer["id"] = Value::Null;
    missing.response = Some(answer);
    // An operation GitHub does not have.
    let unknown = req("GET", "/repos/o/r/nonsense", 200, None, Some(json!({})));
    // A success the description does not list for the operation.
    let mut odd_status = good.clone();
    odd_status.status = 299;

    let found = mismatches(&[bad_request, missing, unknown, odd_status]);
    let text = found.join("\n");
    assert!(
        text.contains("request (/repos/{owner}/{repo}/statuses/{sha}): \"passed\" is not one of"),
        "{text}"
    );
    assert!(
        text.contains("\"context\" is a required property"),
        "{text}"
    );
    assert!(
        text.contains("null is not of type \"integer\" at /id"),
        "{text}"
    );
    assert!(
        text.contains("GET /repos/o/r/nonsense → 200: no such operation"),
        "{text}"
    );
    assert!(
        text.contains("status 299 is not an answer of POST"),
        "{text}"
    );
}
