//! `GET /api/sweeps/<sweep_id>/matrix?token=<token>` (`docs/contracts.md` §5):
//! the job matrix of a dispatched sweep, read-only, for the workflow run
//! that holds the sweep's token. A wrong token is refused, an expired one
//! too, and neither says whether the sweep exists.
use super::{DashState, failure, unavailable};
use crate::store::now_ms;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sweepgate_core::sweep::dispatch::token_matches;

#[derive(Deserialize)]
pub(crate) struct TokenQuery {
    token: Option<String>,
}

pub(crate) async fn matrix(
    State(st): State<DashState>,
    Path(id): Path<String>,
    Query(q): Query<TokenQuery>,
) -> Response {
    let Some(token) = q.token.filter(|t| !t.is_empty()) else {
        return failure(StatusCode::UNAUTHORIZED, "the sweep's token is required");
    };
    let sweep = match st.store.sweep(&id).await {
        Ok(s) => s,
        Err(e) => return unavailable(&e),
    };
    let Some(sweep) = sweep.filter(|s| token_matches(&s.token_sha256, &token)) else {
        tracing::warn!(sweep = %id, "matrix requested with a wrong token");
        return failure(StatusCode::FORBIDDEN, "wrong token for this sweep");
    };
    if sweep.expires_at <= now_ms() {
        return failure(StatusCode::FORBIDDEN, "this sweep's token has expired");
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        sweep.matrix,
    )
        .into_response()
}
