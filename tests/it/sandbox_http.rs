//! The sandbox GitHub over real HTTP: authentication, content, compare,
//! pull-request files and comments with pagination and `Link` headers,
//! labels, timeline.
use base64::Engine;
use serde_json::{Value, json};
use sweepgate_sandbox::{Change, PullRequestSpec, Sandbox};

const OWNER: &str = "SemiAnalysisAI";
const REPO: &str = "InferenceX";

struct World {
    sb: Sandbox,
    base: String,
    token: String,
    http: reqwest::Client,
}

async fn world() -> World {
    let (sb, base) = Sandbox::start().await.unwrap();
    sb.add_org(OWNER);
    sb.add_repo(
        OWNER,
        REPO,
        "main",
        [
            ("README.md", "# InferenceX\n".to_string()),
            (
                "configs/nvidia-master.yaml",
                (1..=40).map(|i| format!("line {i}\n")).collect::<String>(),
            ),
            ("benchmarks/run.sh", "#!/bin/bash\necho run\n".to_string()),
        ],
    )
    .unwrap();
    sb.add_repo(
        "vllm-project",
        "recipes",
        "main",
        [("DeepSeek/V3.md", "# recipe\n")],
    )
    .unwrap();
    let inst = sb.install_app(OWNER);
    let token = sb.issue_token(inst).unwrap();
    World {
        sb,
        base,
        token,
        http: reqwest::Client::new(),
    }
}

impl World {
    async fn get(&self, path: &str) -> reqwest::Response {
        self.http
            .get(format!("{}{path}", self.base))
            .header("authorization", format!("token {}", self.token))
            .send()
            .await
            .unwrap()
    }
    async fn send(&self, method: reqwest::Method, path: &str, body: Value) -> reqwest::Response {
        self.http
            .request(method, format!("{}{path}", self.base))
            .header("authorization", format!("Bearer {}", self.token))
            .json(&body)
            .send()
            .await
            .unwrap()
    }
}

fn link_rel(resp: &reqwest::Response, rel: &str) -> Option<String> {
    let link = resp.headers().get("link")?.to_str().ok()?.to_string();
    link.split(", ").find_map(|part| {
        let (url, r) = part.split_once("; ")?;
        (r == format!("rel=\"{rel}\"")).then(|| url.trim_matches(['<', '>']).to_string())
    })
}

#[tokio::test]
async fn requests_without_or_with_bad_credentials_get_401_like_github() {
    let w = world().await;
    let resp = w
        .http
        .get(format!("{}/repos/{OWNER}/{REPO}", w.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["message"], "Requires authentication");
    assert!(
        body["documentation_url"]
            .as_str()
            .unwrap()
            .starts_with("https://docs.github.com")
    );

    let resp = w
        .http
        .get(format!("{}/repos/{OWNER}/{REPO}", w.base))
        .header("authorization", "token ghs_not_issued")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(
        resp.json::<Value>().await.unwrap()["message"],
        "Bad credentials"
    );

    let resp = w.get(&format!("/repos/{OWNER}/{REPO}")).await;
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().contains_key("x-ratelimit-remaining"));
    let repo: Value = resp.json().await.unwrap();
    assert_eq!(repo["full_name"], "SemiAnalysisAI/InferenceX");
    assert_eq!(repo["default_branch"], "main");
    assert_eq!(repo["owner"]["type"], "Organization");

    w.sb.expire_tokens();
    assert_eq!(w.get(&format!("/repos/{OWNER}/{REPO}")).await.status(), 401);
}

#[tokio::test]
async fn app_jwt_exchanges_for_a_long_installation_token() {
    let w = world().await;
    let jwt = w.sb.forge_app_jwt();
    let app: Value = w
        .http
        .get(format!("{}/app", w.base))
        .bearer_auth(&jwt)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(app["id"], w.sb.app_id());
    let inst: Value = w
        .http
        .get(format!("{}/repos/{OWNER}/{REPO}/installation", w.base))
        .bearer_auth(&jwt)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = inst["id"].as_u64().unwrap();
    let resp = w
        .http
        .post(format!("{}/app/installations/{id}/access_tokens", w.base))
        .bearer_auth(&jwt)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let tok: Value = resp.json().await.unwrap();
    let token = tok["token"].as_str().unwrap().to_string();
    assert!(token.starts_with("ghs_") && token.len() > 40, "{token}");
    assert!(tok["expires_at"].as_str().unwrap().ends_with('Z'));
    let ok = w
        .http
        .get(format!("{}/repos/{OWNER}/{REPO}/pulls", w.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);

    // An installation token is not an app credential, and a JWT with the
    // wrong issuer is refused.
    let wrong = w
        .http
        .get(format!("{}/app", w.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let now = chrono::Utc::now().timestamp();
    let bad = format!(
        "{}.{}.{}",
        b64.encode(r#"{"alg":"RS256"}"#),
        b64.encode(json!({ "iss": 1, "iat": now, "exp": now + 300 }).to_string()),
        b64.encode([1u8; 256])
    );
    let resp = w
        .http
        .get(format!("{}/app", w.base))
        .bearer_auth(bad)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test]
async fn writes_outside_the_installation_are_forbidden_reads_of_public_repos_work() {
    let w = world().await;
    // Upstream repositories are public: readable, not writable.
    let resp = w
        .get("/repos/vllm-project/recipes/contents/DeepSeek/V3.md")
        .await;
    assert_eq!(resp.status(), 200);
    w.sb.commit(
        "vllm-project",
        "recipes",
        "f",
        &[Change::write("x.md", "x\n")],
        "x",
    )
    .unwrap();
    let pr =
        w.sb.open_pr(PullRequestSpec::new("vllm-project", "recipes", "f", "dev"))
            .unwrap();
    let resp = w
        .send(
            reqwest::Method::POST,
            &format!("/repos/vllm-project/recipes/issues/{}/comments", pr.number),
            json!({ "body": "hi" }),
        )
        .await;
    assert_eq!(resp.status(), 403);
    assert_eq!(
        resp.json::<Value>().await.unwrap()["message"],
        "Resource not accessible by integration"
    );
}

#[tokio::test]
async fn contents_round_trip_through_base64_at_any_ref() {
    let w = world().await;
    let binary: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
    let sha =
        w.sb.commit(
            OWNER,
            REPO,
            "feature",
            &[
                Change::write("data/blob.bin", binary.clone()),
                Change::write("README.md", "# changed\n"),
            ],
            "data",
        )
        .unwrap();
    let resp = w
        .get(&format!(
            "/repos/{OWNER}/{REPO}/contents/data/blob.bin?ref={sha}"
        ))
        .await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["type"], "file");
    assert_eq!(v["encoding"], "base64");
    let content = v["content"].as_str().unwrap();
    assert!(content.contains('\n'), "GitHub wraps base64 lines");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(content.replace('\n', ""))
        .unwrap();
    assert_eq!(decoded, binary);
    assert_eq!(v["sha"], sweepgate_sandbox::hash_object("blob", &binary));

    // The default branch still has the old README; the branch has the new.
    let old: Value = w
        .get(&format!("/repos/{OWNER}/{REPO}/contents/README.md"))
        .await
        .json()
        .await
        .unwrap();
    let old = base64::engine::general_purpose::STANDARD
        .decode(old["content"].as_str().unwrap().replace('\n', ""))
        .unwrap();
    assert_eq!(old, b"# InferenceX\n");
    let raw = w
        .http
        .get(format!(
            "{}/repos/{OWNER}/{REPO}/contents/README.md?ref=feature",
            w.base
        ))
        .header("authorization", format!("token {}", w.token))
        .header("accept", "application/vnd.github.raw+json")
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&raw[..], b"# changed\n");

    let dir: Value = w
        .get(&format!("/repos/{OWNER}/{REPO}/contents/configs"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(dir[0]["path"], "configs/nvidia-master.yaml");
    let missing = w
        .get(&format!("/repos/{OWNER}/{REPO}/contents/nope.txt"))
        .await;
    assert_eq!(missing.status(), 404);
    assert_eq!(
        missing.json::<Value>().await.unwrap()["message"],
        "Not Found"
    );
    let bad_ref = w
        .get(&format!(
            "/repos/{OWNER}/{REPO}/contents/README.md?ref=no-such-branch"
        ))
        .await;
    assert_eq!(bad_ref.status(), 404);
}

#[tokio::test]
async fn git_trees_recursive_list_every_path() {
    let w = world().await;
    let flat: Value = w
        .get(&format!("/repos/{OWNER}/{REPO}/git/trees/main"))
        .await
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = flat["tree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["README.md", "benchmarks", "configs"]);
    let rec: Value = w
        .get(&format!("/repos/{OWNER}/{REPO}/git/trees/main?recursive=1"))
        .await
        .json()
        .await
        .unwrap();
    let blobs: Vec<&str> = rec["tree"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "blob")
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        blobs,
        [
            "README.md",
            "benchmarks/run.sh",
            "configs/nvidia-master.yaml"
        ]
    );
    assert_eq!(rec["truncated"], false);
    let tree_sha = rec["sha"].as_str().unwrap();
    let by_sha = w
        .get(&format!("/repos/{OWNER}/{REPO}/git/trees/{tree_sha}"))
        .await;
    assert_eq!(by_sha.status(), 200);
}

#[tokio::test]
async fn compare_has_files_with_patches_and_commit_counts() {
    let w = world().await;
    let mut master: Vec<String> = (1..=40).map(|i| format!("line {i}\n")).collect();
    master[19] = "line twenty\n".into();
    let head =
        w.sb.commit(
            OWNER,
            REPO,
            "feature",
            &[
                Change::write("configs/nvidia-master.yaml", master.concat()),
                Change::delete("benchmarks/run.sh"),
                Change::write("new.txt", "n\n"),
            ],
            "edit",
        )
        .unwrap();
    let resp = w
        .get(&format!("/repos/{OWNER}/{REPO}/compare/main...feature"))
        .await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["status"], "ahead");
    assert_eq!(v["ahead_by"], 1);
    assert_eq!(v["behind_by"], 0);
    assert_eq!(v["commits"][0]["sha"], head);
    let files = v["files"].as_array().unwrap();
    let by_name = |n: &str| files.iter().find(|f| f["filename"] == n).unwrap();
    let cfg = by_name("configs/nvidia-master.yaml");
    assert_eq!(cfg["status"], "modified");
    assert_eq!(
        cfg["patch"],
        "@@ -17,7 +17,7 @@\n line 17\n line 18\n line 19\n-line 20\n+line twenty\n line 21\n line 22\n line 23"
    );
    assert_eq!(
        (cfg["additions"].as_u64(), cfg["deletions"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(by_name("benchmarks/run.sh")["status"], "removed");
    assert_eq!(by_name("new.txt")["status"], "added");
    assert_eq!(by_name("new.txt")["patch"], "@@ -0,0 +1 @@\n+n");

    // Diverged: main moves on; compare uses the merge base.
    w.sb.commit(
        OWNER,
        REPO,
        "main",
        &[Change::write("other.txt", "o\n")],
        "main moves",
    )
    .unwrap();
    let v: Value = w
        .get(&format!("/repos/{OWNER}/{REPO}/compare/main...{head}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["status"], "diverged");
    assert_eq!(v["behind_by"], 1);
    assert!(
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["filename"] != "other.txt")
    );
}

#[tokio::test]
async fn pr_files_paginate_with_link_headers_and_max_100() {
    let w = world().await;
    let changes: Vec<Change> = (0..250)
        .map(|i| Change::write(format!("many/f{i:03}.txt"), format!("{i}\n")))
        .collect();
    w.sb.commit(OWNER, REPO, "big", &changes, "many files")
        .unwrap();
    let pr =
        w.sb.open_pr(
            PullRequestSpec::new(OWNER, REPO, "big", "alice")
                .title("Big")
                .body("body"),
        )
        .unwrap();
    let first = w
        .get(&format!("/repos/{OWNER}/{REPO}/pulls/{}/files", pr.number))
        .await;
    assert!(first.headers().get("link").is_some());
    let next = link_rel(&first, "next").unwrap();
    assert!(
        next.starts_with(&w.base) && next.contains("page=2"),
        "{next}"
    );
    assert_eq!(
        first.json::<Vec<Value>>().await.unwrap().len(),
        30,
        "default per_page is 30"
    );

    let mut all = Vec::new();
    let mut url = Some(format!(
        "{}/repos/{OWNER}/{REPO}/pulls/{}/files?per_page=500",
        w.base, pr.number
    ));
    let mut pages = 0;
    while let Some(u) = url {
        let resp = w
            .http
            .get(&u)
            .header("authorization", format!("token {}", w.token))
            .send()
            .await
            .unwrap();
        url = link_rel(&resp, "next");
        let page: Vec<Value> = resp.json().await.unwrap();
        assert!(page.len() <= 100);
        all.extend(page);
        pages += 1;
    }
    assert_eq!(pages, 3, "per_page is capped at 100");
    assert_eq!(all.len(), 250);
    assert_eq!(all[0]["filename"], "many/f000.txt");
    assert_eq!(all[0]["patch"], "@@ -0,0 +1 @@\n+0");

    let last = w
        .get(&format!(
            "/repos/{OWNER}/{REPO}/pulls/{}/files?per_page=100&page=3",
            pr.number
        ))
        .await;
    assert!(link_rel(&last, "next").is_none());
    assert!(link_rel(&last, "prev").unwrap().contains("page=2"));
    assert!(link_rel(&last, "first").unwrap().contains("page=1"));

    let p: Value = w
        .get(&format!("/repos/{OWNER}/{REPO}/pulls/{}", pr.number))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(p["changed_files"], 250);
    assert_eq!(p["head"]["sha"], pr.head_sha().unwrap());
    assert_eq!(p["base"]["ref"], "main");
    assert_eq!(p["user"]["login"], "alice");
    assert_eq!(p["state"], "open");
    let commits: Vec<Value> = w
        .get(&format!(
            "/repos/{OWNER}/{REPO}/pulls/{}/commits",
            pr.number
        ))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(commits.len(), 1);
    assert_eq!(commits[0]["commit"]["message"], "many files");
}

#[tokio::test]
async fn comments_create_list_paginate_edit() {
    let w = world().await;
    w.sb.commit(OWNER, REPO, "c", &[Change::write("c.txt", "c\n")], "c")
        .unwrap();
    let pr =
        w.sb.open_pr(PullRequestSpec::new(OWNER, REPO, "c", "alice"))
            .unwrap();
    for i in 0..45 {
        pr.post_comment("bob", "MEMBER", &format!("comment {i}"))
            .unwrap();
    }
    let resp = w
        .send(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/issues/{}/comments", pr.number),
            json!({ "body": "<!-- marker --> verdict" }),
        )
        .await;
    assert_eq!(resp.status(), 201);
    let created: Value = resp.json().await.unwrap();
    assert_eq!(created["user"]["login"], "sweepgate[bot]");
    assert_eq!(created["user"]["type"], "Bot");
    assert!(created["performed_via_github_app"].is_object());
    let id = created["id"].as_u64().unwrap();

    let page1 = w
        .get(&format!(
            "/repos/{OWNER}/{REPO}/issues/{}/comments?per_page=20",
            pr.number
        ))
        .await;
    let last = link_rel(&page1, "last").unwrap();
    assert!(
        last.contains("page=3") && last.contains("per_page=20"),
        "{last}"
    );
    let page3: Vec<Value> = w
        .http
        .get(&last)
        .header("authorization", format!("token {}", w.token))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(page3.len(), 6);
    assert_eq!(page3[5]["body"], "<!-- marker --> verdict");

    let resp = w
        .send(
            reqwest::Method::PATCH,
            &format!("/repos/{OWNER}/{REPO}/issues/comments/{id}"),
            json!({ "body": "edited" }),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let got: Value = w
        .get(&format!("/repos/{OWNER}/{REPO}/issues/comments/{id}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(got["body"], "edited");
    assert_eq!(w.sb.bot_comments(OWNER, REPO, pr.number).len(), 1);
    assert_eq!(pr.comments().len(), 46);

    // The app may not edit a human's comment; bad JSON is a 400.
    let human = pr.comments()[0].id;
    let resp = w
        .send(
            reqwest::Method::PATCH,
            &format!("/repos/{OWNER}/{REPO}/issues/comments/{human}"),
            json!({ "body": "x" }),
        )
        .await;
    assert_eq!(resp.status(), 403);
    let resp = w
        .http
        .post(format!(
            "{}/repos/{OWNER}/{REPO}/issues/{}/comments",
            w.base, pr.number
        ))
        .header("authorization", format!("token {}", w.token))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let resp = w
        .send(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/issues/{}/comments", pr.number),
            json!({}),
        )
        .await;
    assert_eq!(resp.status(), 422);
    assert_eq!(
        resp.json::<Value>().await.unwrap()["errors"][0]["field"],
        "body"
    );
    let resp = w
        .get(&format!(
            "/repos/{OWNER}/{REPO}/issues/not-a-number/comments"
        ))
        .await;
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn labels_and_timeline_and_permissions() {
    let w = world().await;
    w.sb.commit(OWNER, REPO, "l", &[Change::write("l.txt", "l\n")], "l")
        .unwrap();
    let pr =
        w.sb.open_pr(PullRequestSpec::new(OWNER, REPO, "l", "alice"))
            .unwrap();
    pr.add_label("full-sweep-fail-fast", "maintainer").unwrap();
    let resp = w
        .send(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/issues/{}/labels", pr.number),
            json!({ "labels": ["all-evals"] }),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let labels: Vec<Value> = resp.json().await.unwrap();
    assert_eq!(
        labels
            .iter()
            .map(|l| l["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["full-sweep-fail-fast", "all-evals"]
    );
    let resp = w
        .send(
            reqwest::Method::DELETE,
            &format!(
                "/repos/{OWNER}/{REPO}/issues/{}/labels/full-sweep-fail-fast",
                pr.number
            ),
            json!(null),
        )
        .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(pr.labels(), ["all-evals"]);
    let resp = w
        .send(
            reqwest::Method::DELETE,
            &format!("/repos/{OWNER}/{REPO}/issues/{}/labels/nope", pr.number),
            json!(null),
        )
        .await;
    assert_eq!(resp.status(), 404);

    pr.post_comment("bob", "MEMBER", "hello").unwrap();
    let tl: Vec<Value> = w
        .get(&format!(
            "/repos/{OWNER}/{REPO}/issues/{}/timeline",
            pr.number
        ))
        .await
        .json()
        .await
        .unwrap();
    let events: Vec<&str> = tl.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(
        events,
        ["committed", "labeled", "labeled", "unlabeled", "commented"]
    );
    assert_eq!(tl[1]["actor"]["login"], "maintainer");
    assert_eq!(tl[1]["label"]["name"], "full-sweep-fail-fast");

    w.sb.set_permission(OWNER, REPO, "carol", "write", "maintain")
        .unwrap();
    let p: Value = w
        .get(&format!(
            "/repos/{OWNER}/{REPO}/collaborators/carol/permission"
        ))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (p["permission"].as_str(), p["role_name"].as_str()),
        (Some("write"), Some("maintain"))
    );
    let p: Value = w
        .get(&format!(
            "/repos/{OWNER}/{REPO}/collaborators/bob/permission"
        ))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(p["role_name"], "read");
    assert_eq!(
        w.get(&format!(
            "/repos/{OWNER}/{REPO}/collaborators/ghost-user/permission"
        ))
        .await
        .status(),
        404
    );

    w.sb.add_team_member(OWNER, "core", "carol", "maintainer");
    let m = w
        .get(&format!("/orgs/{OWNER}/teams/core/memberships/carol"))
        .await;
    assert_eq!(m.status(), 200);
    let m: Value = m.json().await.unwrap();
    assert_eq!(
        (m["role"].as_str(), m["state"].as_str()),
        (Some("maintainer"), Some("active"))
    );
    assert_eq!(
        w.get(&format!("/orgs/{OWNER}/teams/core/memberships/bob"))
            .await
            .status(),
        404
    );
}
