//! An HTTP proxy in front of the model server that rewrites JSON request bodies, for
//! tests that need what bor does not send: a cap on the answer's length (so a turn takes
//! seconds, not minutes) and a forced tool choice (a 135M model does not pick a tool by
//! itself). Everything else passes through unchanged; responses stream back as they come.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use actix_web::http::header;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use serde_json::{Value, json};

/// The most tokens a capped answer may have.
pub const MAX_ANSWER_TOKENS: u64 = 96;

/// Caps the answer of a chat request at [`MAX_ANSWER_TOKENS`].
pub fn cap_answer_length(body: &mut Value) {
    if body.get("messages").is_some() {
        body["max_tokens"] = json!(MAX_ANSWER_TOKENS);
    }
}

/// Caps the answer, decodes greedily and, on a request that offers tools, makes the
/// server call `search_documents` (llama-cpp-python then constrains the output to the
/// tool's JSON schema; greedy sampling keeps the arguments short).
pub fn force_search_documents(body: &mut Value) {
    cap_answer_length(body);
    if body.get("messages").is_some() {
        body["temperature"] = json!(0);
    }
    if body.get("tools").is_some() {
        body["tool_choice"] = json!({"type": "function", "function": {"name": "search_documents"}});
    }
}

struct Upstream {
    base_url: String,
    rewrite: fn(&mut Value),
    chat_requests: Arc<Mutex<Vec<Value>>>,
}

pub struct RewritingProxy {
    port: u16,
    chat_requests: Arc<Mutex<Vec<Value>>>,
}

impl RewritingProxy {
    /// Listens on 127.0.0.1:0 inside the current actix system and forwards to
    /// `upstream_base_url` (an OpenAI base URL ending in `/v1`).
    pub fn start(upstream_base_url: &str, rewrite: fn(&mut Value)) -> RewritingProxy {
        let chat_requests = Arc::new(Mutex::new(Vec::new()));
        let upstream = web::Data::new(Upstream {
            base_url: upstream_base_url.trim_end_matches('/').to_owned(),
            rewrite,
            chat_requests: Arc::clone(&chat_requests),
        });
        let server = HttpServer::new(move || {
            App::new()
                .app_data(upstream.clone())
                .app_data(web::PayloadConfig::new(16 * 1024 * 1024))
                .default_service(web::to(forward))
        })
        .workers(1)
        .bind(("127.0.0.1", 0))
        .expect("the proxy binds");
        let port = server.addrs()[0].port();
        actix_web::rt::spawn(server.run());
        RewritingProxy {
            port,
            chat_requests,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The chat request bodies as forwarded (after the rewrite), in order.
    pub fn chat_requests(&self) -> Vec<Value> {
        self.chat_requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

async fn forward(
    request: HttpRequest,
    body: web::Bytes,
    upstream: web::Data<Upstream>,
) -> Result<HttpResponse, actix_web::Error> {
    let path = request.path();
    let url = format!(
        "{}{}",
        upstream.base_url,
        path.strip_prefix("/v1").unwrap_or(path)
    );
    let client = awc::Client::builder()
        .timeout(Duration::from_secs(600))
        .finish();
    let outgoing = client
        .request(request.method().clone(), url)
        .insert_header((header::CONTENT_TYPE, "application/json"));
    let sent = match serde_json::from_slice::<Value>(&body) {
        Ok(mut json) => {
            (upstream.rewrite)(&mut json);
            if path.ends_with("/chat/completions") {
                upstream
                    .chat_requests
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(json.clone());
            }
            outgoing.send_body(json.to_string()).await
        }
        Err(_) if body.is_empty() => outgoing.send().await,
        Err(_) => outgoing.send_body(body).await,
    };
    let response = sent.map_err(actix_web::error::ErrorBadGateway)?;
    let mut reply = HttpResponse::build(response.status());
    if let Some(content_type) = response.headers().get(header::CONTENT_TYPE) {
        reply.insert_header((header::CONTENT_TYPE, content_type.clone()));
    }
    Ok(reply.streaming(response))
}
