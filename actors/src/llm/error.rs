//! Typed failures of LLM requests: what went wrong in one attempt, and how a request
//! ended after the retry policy had its say.

use std::time::Duration;

/// What went wrong in a single attempt of a request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AttemptError {
    #[error("could not connect to the LLM server: {0}")]
    Connect(String),
    #[error("connecting to the LLM server took longer than {0:?}")]
    ConnectTimeout(Duration),
    #[error("the LLM server was silent for longer than {0:?}")]
    ReadTimeout(Duration),
    #[error("the LLM server answered HTTP {status}: {body}")]
    Status { status: u16, body: String },
    #[error("the response stream broke: {0}")]
    Broken(String),
    #[error("the LLM server reported an error in the stream: {0}")]
    InStream(String),
    #[error("the LLM server sent a response bor cannot read: {0}")]
    Invalid(String),
    /// The embeddings server answered that it serves no embeddings (a chat server, a
    /// server started without them): a refusal no retry changes.
    #[error("the embeddings server does not serve embeddings (HTTP {status}: {body}); {fix}")]
    EmbeddingsNotServed {
        status: u16,
        body: String,
        /// Which setting points where and how to change it ([`LlmSettings::embeddings_fix`]).
        ///
        /// [`LlmSettings::embeddings_fix`]: super::LlmSettings::embeddings_fix
        fix: String,
    },
}

/// What servers answer to an embeddings request they cannot serve, lower case: llama.cpp
/// and Ollama ("This server does not support embeddings. Start it with `--embeddings`",
/// HTTP 501), llama-cpp-python ("Llama model must be created with embedding=True to
/// call this method", HTTP 500), vLLM ("The model does not support Embeddings API",
/// HTTP 400) and the like. Each is read in a body that names embeddings.
const EMBEDDINGS_REFUSALS: &[&str] = &[
    "does not support embedding",
    "must be created with embedding",
    "not an embedding model",
    "embeddings are not enabled",
    "embedding is not enabled",
    "embeddings not enabled",
    "not support the embeddings",
];

impl AttemptError {
    /// The error with every occurrence of `secret` (the API key, which a server may
    /// echo in an error body) replaced, before it is logged or reported.
    pub fn without_secret(self, secret: Option<&str>) -> AttemptError {
        let Some(secret) = secret.filter(|secret| !secret.is_empty()) else {
            return self;
        };
        let hide = |text: String| text.replace(secret, "[redacted]");
        match self {
            Self::Connect(text) => Self::Connect(hide(text)),
            Self::Status { status, body } => Self::Status {
                status,
                body: hide(body),
            },
            Self::Broken(text) => Self::Broken(hide(text)),
            Self::InStream(text) => Self::InStream(hide(text)),
            Self::Invalid(text) => Self::Invalid(hide(text)),
            Self::EmbeddingsNotServed { status, body, fix } => Self::EmbeddingsNotServed {
                status,
                body: hide(body),
                fix,
            },
            timeout @ (Self::ConnectTimeout(_) | Self::ReadTimeout(_)) => timeout,
        }
    }

    /// The `status` label of the failed attempt in the LLM request metrics: the HTTP
    /// status when the server answered, else the kind of failure.
    pub fn metric_label(&self) -> String {
        match self {
            Self::Status { status, .. } | Self::EmbeddingsNotServed { status, .. } => {
                status.to_string()
            }
            Self::Connect(_) => "connect_error".to_owned(),
            Self::ConnectTimeout(_) => "connect_timeout".to_owned(),
            Self::ReadTimeout(_) => "timeout".to_owned(),
            Self::Broken(_) => "broken".to_owned(),
            Self::InStream(_) => "stream_error".to_owned(),
            Self::Invalid(_) => "invalid".to_owned(),
        }
    }

    /// Whether the retry policy may try again (docs/PROTOCOL.md, "Retry policy"):
    /// connection failures, timeouts, 408/429/5xx and broken or unreadable streams are;
    /// other 4xx and a server that serves no embeddings are not.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Status { status, .. } => {
                matches!(status, 408 | 429) || *status >= 500 || *status < 400
            }
            Self::EmbeddingsNotServed { .. } => false,
            _ => true,
        }
    }

    /// An answer to an embeddings request, read as what it says: HTTP 501, or a body
    /// that says the server serves no embeddings ([`EMBEDDINGS_REFUSALS`]), becomes
    /// [`AttemptError::EmbeddingsNotServed`] with `fix`; anything else is kept.
    pub fn of_embeddings_request(self, fix: &str) -> AttemptError {
        match self {
            Self::Status { status, body } if status == 501 || refuses_embeddings(&body) => {
                Self::EmbeddingsNotServed {
                    status,
                    body,
                    fix: fix.to_owned(),
                }
            }
            other => other,
        }
    }
}

fn refuses_embeddings(body: &str) -> bool {
    let body = body.to_lowercase();
    EMBEDDINGS_REFUSALS
        .iter()
        .any(|refusal| body.contains(refusal))
}

impl From<super::sse::SseError> for AttemptError {
    fn from(err: super::sse::SseError) -> Self {
        Self::Invalid(err.to_string())
    }
}

/// How a request failed for good; each kind maps to one `error` frame code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// Every attempt failed with a retryable error (`llm_unavailable`).
    #[error("the LLM server is unavailable after {attempts} attempt(s): {last}")]
    Unavailable { attempts: u32, last: AttemptError },
    /// The server refused the request itself, e.g. HTTP 400/401/404 (`llm_rejected`).
    #[error("the LLM server rejected the request: {0}")]
    Rejected(AttemptError),
    /// The request failed after part of its answer had been forwarded (`llm_interrupted`).
    #[error("the LLM stream was interrupted after output was forwarded: {0}")]
    Interrupted(AttemptError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16) -> AttemptError {
        AttemptError::Status {
            status,
            body: String::new(),
        }
    }

    #[test]
    fn retryable_statuses_follow_the_policy() {
        for code in [408, 429, 500, 502, 503, 504, 599] {
            assert!(status(code).is_retryable(), "{code} should be retried");
        }
        for code in [400, 401, 403, 404, 405, 413, 422] {
            assert!(!status(code).is_retryable(), "{code} must not be retried");
        }
    }

    #[test]
    fn servers_that_serve_no_embeddings_are_recognised_and_not_retried() {
        let answer = |status, body: &str| {
            AttemptError::Status {
                status,
                body: body.to_owned(),
            }
            .of_embeddings_request("set BOR_LLM_EMBED_BASE_URL")
        };
        for (code, body) in [
            (
                500,
                "Llama model must be created with embedding=True to call this method",
            ),
            (
                501,
                "This server does not support embeddings. Start it with `--embeddings`",
            ),
            (501, ""),
            (400, "The model does not support Embeddings API"),
            (400, "this model is not an embedding model"),
        ] {
            let refused = answer(code, body);
            assert!(
                matches!(&refused, AttemptError::EmbeddingsNotServed { fix, .. } if fix == "set BOR_LLM_EMBED_BASE_URL"),
                "{code} {body}: {refused:?}"
            );
            assert!(!refused.is_retryable());
            assert_eq!(refused.metric_label(), code.to_string());
        }
        for (code, body) in [
            (500, "CUDA out of memory"),
            (503, "loading model"),
            (400, "bad input"),
        ] {
            assert!(
                matches!(answer(code, body), AttemptError::Status { .. }),
                "{code} {body}"
            );
        }
    }

    #[test]
    fn transport_failures_are_retryable() {
        assert!(AttemptError::Connect("refused".into()).is_retryable());
        assert!(AttemptError::ConnectTimeout(Duration::from_secs(1)).is_retryable());
        assert!(AttemptError::ReadTimeout(Duration::from_secs(1)).is_retryable());
        assert!(AttemptError::Broken("eof".into()).is_retryable());
        assert!(AttemptError::InStream("overloaded".into()).is_retryable());
    }

    #[test]
    fn metric_labels_name_the_status_or_the_kind_of_failure() {
        assert_eq!(status(503).metric_label(), "503");
        assert_eq!(
            AttemptError::Connect("refused".into()).metric_label(),
            "connect_error"
        );
        assert_eq!(
            AttemptError::ConnectTimeout(Duration::from_secs(1)).metric_label(),
            "connect_timeout"
        );
        assert_eq!(
            AttemptError::ReadTimeout(Duration::from_secs(1)).metric_label(),
            "timeout"
        );
        assert_eq!(AttemptError::Broken("eof".into()).metric_label(), "broken");
        assert_eq!(
            AttemptError::InStream("x".into()).metric_label(),
            "stream_error"
        );
        assert_eq!(AttemptError::Invalid("x".into()).metric_label(), "invalid");
    }
}
