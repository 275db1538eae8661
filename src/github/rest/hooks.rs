//! The App's webhook deliveries (`/app/hook/deliveries`, as the App: JWT):
//! the list GitHub keeps of every delivery attempt, and a request to
//! deliver one again.
use crate::github::{Api, GitHubError};
use serde::Deserialize;

/// One delivery attempt as GitHub lists it; a redelivery is a new attempt
/// with the same `guid` (the `X-GitHub-Delivery` header).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct HookDelivery {
    pub id: u64,
    pub guid: String,
    pub delivered_at: chrono::DateTime<chrono::Utc>,
    /// The receiver's HTTP status; 0 when it never answered.
    #[serde(default)]
    pub status_code: u16,
}

/// One page of attempts, newest first, and the path of the next page.
pub(crate) struct DeliveryPage {
    pub deliveries: Vec<HookDelivery>,
    pub next: Option<String>,
}

impl Api {
    /// A page of the App's delivery attempts: the first page, or the
    /// `next` path of the previous one.
    pub(crate) async fn hook_deliveries(
        &self,
        next: Option<&str>,
    ) -> Result<DeliveryPage, GitHubError> {
        let path = next.unwrap_or("/app/hook/deliveries?per_page=100");
        let resp = self.send(http::Method::GET, path, None).await?;
        let deliveries: Vec<HookDelivery> = resp.json(path)?;
        let next = resp
            .next_link()
            .and_then(|l| l.find("/app/hook/deliveries").map(|i| l[i..].to_owned()));
        Ok(DeliveryPage { deliveries, next })
    }

    /// Asks GitHub to deliver attempt `id`'s payload again.
    pub(crate) async fn redeliver(&self, id: u64) -> Result<(), GitHubError> {
        let path = format!("/app/hook/deliveries/{id}/attempts");
        self.send(http::Method::POST, &path, None).await?;
        Ok(())
    }
}
