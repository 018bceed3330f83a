//! What an LlmActor needs to know about the LLM server.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::messages::EmbedPurpose;

/// Connection and retry settings of the LLM server (`BOR_LLM_*` in .env.example;
/// docs/PROTOCOL.md, "Retry policy").
#[derive(Clone)]
pub struct LlmSettings {
    /// Base URL without a trailing slash, e.g. `http://127.0.0.1:18089/v1`: chat
    /// completions and the model list.
    pub base_url: String,
    /// Where embeddings are requested (the same as `base_url` unless the embeddings
    /// have a server of their own).
    pub embed_base_url: String,
    /// Sent as `Authorization: Bearer`; never logged.
    pub api_key: Option<String>,
    pub chat_model: String,
    pub embed_model: String,
    /// Put before each text sent for embedding, by what the text is.
    pub embed_prefixes: EmbedPrefixes,
    /// Retries after the first attempt.
    pub retries: u32,
    /// Flat delay between attempts.
    pub retry_delay: Duration,
    pub connect_timeout: Duration,
    /// Silence tolerated before the response headers and between body chunks.
    pub read_timeout: Duration,
    /// Sent as `temperature` with chat requests when set (0 = greedy decoding).
    pub temperature: Option<f32>,
    /// Sent as `max_tokens` with chat requests when set.
    pub max_tokens: Option<u32>,
    /// What an operator reads when the embeddings server serves no embeddings: which
    /// setting points where (no credentials) and how to change it.
    pub embeddings_fix: String,
    /// The re-ranking server, when re-ranking is on.
    pub rerank: Option<RerankServer>,
    /// Whether streamed chat requests ask for the usage chunk.
    pub stream_usage: StreamUsage,
}

/// Whether streamed chat requests ask for a usage chunk (`stream_options:
/// {"include_usage": true}`): yes until the chat server refuses the field (HTTP 400
/// naming it), then never again in this process. Every clone of the settings shares it.
#[derive(Clone, Default)]
pub struct StreamUsage {
    refused: Arc<AtomicBool>,
}

impl StreamUsage {
    pub fn asked(&self) -> bool {
        !self.refused.load(Ordering::Relaxed)
    }

    /// The server refused the field: stop asking.
    pub fn refused_by_server(&self) {
        self.refused.store(true, Ordering::Relaxed);
    }
}

/// The task prefixes of an embedding model trained with them (nomic-embed-text:
/// `search_query:` and `search_document:`; `BOR_LLM_EMBED_QUERY_PREFIX` and
/// `BOR_LLM_EMBED_DOCUMENT_PREFIX`): each is put before a text of its purpose with one
/// space between. None: the text is sent as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmbedPrefixes {
    pub query: Option<String>,
    pub document: Option<String>,
}

impl EmbedPrefixes {
    /// The texts as the embedding model is to read them.
    pub fn applied(&self, purpose: EmbedPurpose, texts: Vec<String>) -> Vec<String> {
        let prefix = match purpose {
            EmbedPurpose::Query => &self.query,
            EmbedPurpose::Document => &self.document,
        };
        match prefix {
            Some(prefix) => texts
                .into_iter()
                .map(|text| format!("{prefix} {text}"))
                .collect(),
            None => texts,
        }
    }
}

/// A server of the `/rerank` shape (`BOR_RERANK_*`; docs/RETRIEVAL.md, "Re-ranking").
#[derive(Clone)]
pub struct RerankServer {
    /// Base URL without a trailing slash; `rerank` is requested below it.
    pub base_url: String,
    /// Sent as `model` when set (a server with one model needs none).
    pub model: Option<String>,
    /// Sent as `Authorization: Bearer` to this server only; never logged.
    pub api_key: Option<String>,
}

/// The path of the embeddings endpoint below a base URL.
pub(crate) const EMBEDDINGS_PATH: &str = "embeddings";
/// The path of the re-ranking endpoint below the re-ranking server's base URL.
pub(crate) const RERANK_PATH: &str = "rerank";

impl LlmSettings {
    /// The URL of `path`: on the embeddings server for embeddings, else the chat server.
    pub(crate) fn url(&self, path: &str) -> String {
        let base = match (path, &self.rerank) {
            (EMBEDDINGS_PATH, _) => &self.embed_base_url,
            (RERANK_PATH, Some(rerank)) => &rerank.base_url,
            _ => &self.base_url,
        };
        format!("{base}/{path}")
    }

    /// The bearer token sent with a request to `path`: the re-ranking server has its
    /// own; the others share the LLM server's.
    pub(crate) fn api_key_for(&self, path: &str) -> Option<&str> {
        match (path, &self.rerank) {
            (RERANK_PATH, Some(rerank)) => rerank.api_key.as_deref(),
            _ => self.api_key.as_deref(),
        }
    }

    /// Whether embeddings go to another server than chat.
    pub fn separate_embeddings_server(&self) -> bool {
        self.embed_base_url != self.base_url
    }

    /// The same settings aimed at the embeddings server only (its model list is then
    /// the one `list_models` reads).
    pub fn embeddings_server(&self) -> LlmSettings {
        LlmSettings {
            base_url: self.embed_base_url.clone(),
            ..self.clone()
        }
    }
}

impl fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmSettings")
            .field("base_url", &self.base_url)
            .field("embed_base_url", &self.embed_base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("chat_model", &self.chat_model)
            .field("embed_model", &self.embed_model)
            .field("embed_prefixes", &self.embed_prefixes)
            .field("retries", &self.retries)
            .field("retry_delay", &self.retry_delay)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("embeddings_fix", &self.embeddings_fix)
            .field("rerank", &self.rerank)
            .field("stream_usage", &self.stream_usage.asked())
            .finish()
    }
}

impl fmt::Debug for RerankServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RerankServer")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_hides_the_api_key() {
        let settings = LlmSettings {
            base_url: "http://127.0.0.1:1/v1".into(),
            embed_base_url: "http://127.0.0.1:2/v1".into(),
            api_key: Some("sk-very-secret".into()),
            chat_model: "m".into(),
            embed_model: "e".into(),
            embed_prefixes: EmbedPrefixes::default(),
            retries: 3,
            retry_delay: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(120),
            temperature: None,
            max_tokens: None,
            embeddings_fix: String::new(),
            rerank: Some(RerankServer {
                base_url: "http://127.0.0.1:3/v1".into(),
                model: None,
                api_key: Some("rerank-secret".into()),
            }),
            stream_usage: StreamUsage::default(),
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(!shown.contains("rerank-secret"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
        assert_eq!(settings.url("models"), "http://127.0.0.1:1/v1/models");
    }

    /// A chat server on 18089 and an embeddings server on 18088, no key.
    fn two_servers() -> LlmSettings {
        LlmSettings {
            base_url: "http://127.0.0.1:18089/v1".into(),
            embed_base_url: "http://127.0.0.1:18088/v1".into(),
            api_key: None,
            chat_model: "chat".into(),
            embed_model: "embed".into(),
            embed_prefixes: EmbedPrefixes::default(),
            retries: 0,
            retry_delay: Duration::ZERO,
            connect_timeout: Duration::from_secs(1),
            read_timeout: Duration::from_secs(1),
            temperature: None,
            max_tokens: None,
            embeddings_fix: String::new(),
            rerank: None,
            stream_usage: StreamUsage::default(),
        }
    }

    #[test]
    fn embeddings_go_to_the_embeddings_server_and_the_rest_to_the_chat_server() {
        let settings = two_servers();
        assert!(settings.separate_embeddings_server());
        assert_eq!(
            settings.url(EMBEDDINGS_PATH),
            "http://127.0.0.1:18088/v1/embeddings"
        );
        assert_eq!(
            settings.url("chat/completions"),
            "http://127.0.0.1:18089/v1/chat/completions"
        );
        let embeddings = settings.embeddings_server();
        assert_eq!(embeddings.url("models"), "http://127.0.0.1:18088/v1/models");
        assert!(!embeddings.separate_embeddings_server());
    }

    #[test]
    fn each_purpose_gets_its_own_prefix_and_none_leaves_the_text_alone() {
        let texts = || vec!["What is oolong?".to_owned(), "Tea.".to_owned()];
        let prefixes = EmbedPrefixes {
            query: Some("search_query:".into()),
            document: Some("search_document:".into()),
        };
        assert_eq!(
            prefixes.applied(EmbedPurpose::Query, texts()),
            ["search_query: What is oolong?", "search_query: Tea."]
        );
        assert_eq!(
            prefixes.applied(EmbedPurpose::Document, texts()),
            ["search_document: What is oolong?", "search_document: Tea."]
        );
        let queries_only = EmbedPrefixes {
            document: None,
            ..prefixes
        };
        assert_eq!(
            queries_only.applied(EmbedPurpose::Document, texts()),
            texts()
        );
        let none = EmbedPrefixes::default();
        assert_eq!(none.applied(EmbedPurpose::Query, texts()), texts());
    }

    #[test]
    fn re_ranking_goes_to_its_own_server_with_its_own_key() {
        let mut settings = LlmSettings {
            api_key: Some("llm-key".into()),
            rerank: Some(RerankServer {
                base_url: "http://127.0.0.1:18090/v1".into(),
                model: Some("reranker".into()),
                api_key: None,
            }),
            ..two_servers()
        };
        assert_eq!(
            settings.url(RERANK_PATH),
            "http://127.0.0.1:18090/v1/rerank"
        );
        assert_eq!(
            settings.api_key_for(RERANK_PATH),
            None,
            "not the LLM server's key"
        );
        assert_eq!(settings.api_key_for(EMBEDDINGS_PATH), Some("llm-key"));
        settings.rerank = None;
        assert_eq!(
            settings.url(RERANK_PATH),
            "http://127.0.0.1:18089/v1/rerank"
        );
    }
}
