//! The MCP tools (docs/MCP.md): `search`, `fetch` (the pair ChatGPT's connectors ask
//! for) and `list_collections`, their schemas, their arguments and what they return.
//! Each sees what its caller may read and nothing else: the search runs in the caller's
//! scope (`Readable::scope`), a passage of an unreadable document is absent, and a
//! collection the caller cannot read is refused as one that does not exist.

use bor_actors::record::snippet_of;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use url::Url;

use super::super::documents::source_shown_to;
use super::super::error::ApiError;
use super::super::question::checked_question;
use super::super::search::search_with_collections;
use crate::auth::Caller;
use crate::auth::access::Refusal;
use crate::db::collections;
use crate::knowledge::RANKED_PER_SIGNAL;
use crate::knowledge::search::SearchQuery;
use crate::state::AppState;

/// Results of a `search` without `top_k`.
const DEFAULT_TOP_K: usize = 8;
/// Chunks before and after the one `fetch` names that come with it.
const FETCH_NEIGHBOURS: i32 = 1;
/// Readable collections a refused name is answered with, at most.
const NEAR_MISSES: usize = 5;

/// The tools bor offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Search,
    Fetch,
    ListCollections,
}

impl Tool {
    pub const ALL: [Tool; 3] = [Tool::Search, Tool::Fetch, Tool::ListCollections];

    pub fn name(self) -> &'static str {
        match self {
            Tool::Search => "search",
            Tool::Fetch => "fetch",
            Tool::ListCollections => "list_collections",
        }
    }

    pub fn named(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// The tool as `tools/list` describes it.
    pub fn definition(self) -> Value {
        let (title, description, input, output) = match self {
            Tool::Search => (
                "Search the knowledge base",
                "Searches the team's documents that you may read for passages about a query \
                 (meaning and words both count). Returns the best passages, best first, each \
                 with an id to pass to `fetch`, a snippet and the address of the passage. \
                 `collections` narrows the search to collections by name (see \
                 `list_collections`).",
                json!({
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to look for, in words."},
                        "collections": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Only these collections (names from list_collections); all readable ones when absent."
                        },
                        "top_k": {
                            "type": "integer", "minimum": 1, "maximum": RANKED_PER_SIGNAL,
                            "default": DEFAULT_TOP_K,
                            "description": "How many passages to return."
                        }
                    },
                    "required": ["query"]
                }),
                json!({
                    "type": "object",
                    "properties": {
                        "results": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "id": {"type": "string"},
                                    "title": {"type": "string"},
                                    "url": {"type": "string"},
                                    "snippet": {"type": "string"},
                                    "collection": {"type": "string"},
                                    "score": {"type": "number"}
                                },
                                "required": ["id", "title", "url", "snippet", "collection", "score"]
                            }
                        }
                    },
                    "required": ["results"]
                }),
            ),
            Tool::Fetch => (
                "Read a passage",
                "Reads the passage a `search` result's id names, with the passages just \
                 before and after it, its document's title and source, and its address.",
                json!({
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "A passage id from search."}
                    },
                    "required": ["id"]
                }),
                json!({
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "title": {"type": "string"},
                        "text": {"type": "string"},
                        "url": {"type": "string"},
                        "metadata": {"type": "object"}
                    },
                    "required": ["id", "title", "text", "url", "metadata"]
                }),
            ),
            Tool::ListCollections => (
                "List the collections",
                "Lists the collections of documents you may read, with their descriptions \
                 and how many documents each holds.",
                json!({"type": "object", "properties": {}}),
                json!({
                    "type": "object",
                    "properties": {
                        "collections": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "name": {"type": "string"},
                                    "description": {"type": "string"},
                                    "documents": {"type": "integer"}
                                },
                                "required": ["name", "description", "documents"]
                            }
                        }
                    },
                    "required": ["collections"]
                }),
            ),
        };
        json!({
            "name": self.name(),
            "title": title,
            "description": description,
            "inputSchema": input,
            "outputSchema": output,
            "annotations": {"title": title, "readOnlyHint": true, "openWorldHint": false}
        })
    }
}

/// How a call ended.
#[derive(Debug)]
pub enum Outcome {
    /// The tool's result.
    Done(Value),
    /// A refusal the model can act on (arguments, an unknown collection or passage).
    Refused(String),
    /// A dependency failed (database, embedding server); what the client may read.
    Unavailable(String),
}

impl Outcome {
    /// The `outcome` label of `bor_mcp_calls_total`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Done(_) => "ok",
            Outcome::Refused(_) => "tool_error",
            Outcome::Unavailable(_) => "unavailable",
        }
    }
}

/// What a tool needs of the request: the state, the caller and where bor is reached.
pub struct Context<'a> {
    pub state: &'a AppState,
    pub caller: &'a Caller,
    /// `<public>`, the base of passage addresses.
    pub public: &'a Url,
}

impl Context<'_> {
    /// The passage page of chunk `chunk_id` of document `document_id`.
    fn passage_url(&self, document_id: i64, chunk_id: i64) -> String {
        let mut url = self.public.clone();
        url.set_path(&format!("/documents/{document_id}"));
        url.set_query(None);
        url.set_fragment(Some(&format!("chunk-{chunk_id}")));
        url.to_string()
    }
}

/// Runs `tool` with `arguments`.
pub async fn call(context: &Context<'_>, tool: Tool, arguments: Map<String, Value>) -> Outcome {
    let ran = match tool {
        Tool::Search => match read_arguments(arguments) {
            Ok(arguments) => search(context, arguments).await,
            Err(refusal) => return refusal,
        },
        Tool::Fetch => match read_arguments(arguments) {
            Ok(arguments) => fetch(context, arguments).await,
            Err(refusal) => return refusal,
        },
        Tool::ListCollections => list_collections(context).await,
    };
    match ran {
        Ok(outcome) => outcome,
        Err(error @ (ApiError::Unavailable(_) | ApiError::Internal(_))) => {
            error.log_hidden_cause();
            Outcome::Unavailable(error.public_message())
        }
        Err(error) => Outcome::Refused(error.to_string()),
    }
}

/// The arguments as `T`, or the refusal that says which one does not fit.
fn read_arguments<T: DeserializeOwned>(arguments: Map<String, Value>) -> Result<T, Outcome> {
    serde_json::from_value(Value::Object(arguments))
        .map_err(|error| Outcome::Refused(format!("the arguments do not fit: {error}")))
}

#[derive(Deserialize)]
struct SearchArguments {
    query: String,
    #[serde(default)]
    collections: Option<Vec<String>>,
    #[serde(default)]
    top_k: Option<usize>,
}

#[derive(Serialize)]
struct SearchResults {
    results: Vec<SearchHit>,
}

#[derive(Serialize)]
struct SearchHit {
    /// The chunk's id, for `fetch`.
    id: String,
    title: String,
    url: String,
    snippet: String,
    collection: String,
    /// Cosine similarity to the query, as `/api/search` gives it.
    score: f32,
}

/// A collection the caller cannot read, named as one that does not exist, with the
/// readable names like it.
fn no_collection(context: &Context<'_>, name: &str) -> Outcome {
    let near = context
        .caller
        .readable
        .names_like(name, NEAR_MISSES)
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>();
    let hint = if near.is_empty() {
        "list_collections names the collections you can read".to_owned()
    } else {
        format!("did you mean {}?", near.join(", "))
    };
    Outcome::Refused(format!(
        "there is no collection `{name}` you can read; {hint}"
    ))
}

async fn search(context: &Context<'_>, arguments: SearchArguments) -> Result<Outcome, ApiError> {
    let state = context.state;
    let query = match checked_question(&arguments.query, state.config.max_message_chars) {
        Ok(query) => query,
        Err(ApiError::EmptyMessage) => return Ok(Outcome::Refused("`query` is empty".into())),
        Err(ApiError::MessageTooLong { max }) => {
            return Ok(Outcome::Refused(format!(
                "`query` is longer than {max} characters"
            )));
        }
        Err(other) => return Err(other),
    };
    let keep = arguments.top_k.unwrap_or(DEFAULT_TOP_K);
    if !(1..=RANKED_PER_SIGNAL).contains(&keep) {
        return Ok(Outcome::Refused(format!(
            "`top_k` must be from 1 to {RANKED_PER_SIGNAL}"
        )));
    }
    let scope = match context
        .caller
        .readable
        .scope(arguments.collections.as_deref())
    {
        Ok(scope) => scope,
        Err(Refusal::NoCollection(name)) => return Ok(no_collection(context, &name)),
        Err(refusal) => return Err(refusal.into()),
    };
    let searched = SearchQuery {
        text: query.to_owned(),
        keep,
        scope,
    };
    let (outcome, collections) = search_with_collections(state, searched).await?;
    let results = outcome
        .retrieval
        .hits
        .into_iter()
        .filter_map(|hit| {
            Some(SearchHit {
                id: hit.chunk_id.to_string(),
                url: context.passage_url(hit.document_id, hit.chunk_id),
                snippet: snippet_of(&hit.text),
                collection: collections.get(&hit.document_id).cloned()?,
                title: hit.title,
                score: hit.score,
            })
        })
        .collect();
    Ok(Outcome::Done(json!(SearchResults { results })))
}

#[derive(Deserialize)]
struct FetchArguments {
    id: PassageId,
}

/// A passage id as a client sends it: the string `search` gave, or that number.
#[derive(Deserialize)]
#[serde(untagged)]
enum PassageId {
    Text(String),
    Number(i64),
}

#[derive(Serialize)]
struct Passage {
    id: String,
    title: String,
    /// The passage and its neighbours, in their document's order.
    text: String,
    url: String,
    metadata: PassageMetadata,
}

#[derive(Serialize)]
struct PassageMetadata {
    document_id: i64,
    collection: String,
    /// Where the document came from (a file or a web address); absent when posted.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    /// The headings above the passage, outermost first (`""` when none).
    heading: String,
    /// The PDF page it starts on.
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<i32>,
    /// The ids of the passages in `text`, in order.
    passages: Vec<i64>,
}

async fn fetch(context: &Context<'_>, arguments: FetchArguments) -> Result<Outcome, ApiError> {
    let asked = match arguments.id {
        PassageId::Text(text) => text,
        PassageId::Number(number) => number.to_string(),
    };
    let absent = || Outcome::Refused(format!("there is no passage `{asked}` you can read"));
    let Ok(chunk_id) = asked.trim().parse::<i64>() else {
        return Ok(absent());
    };
    let readable = &context.caller.readable;
    let found = context
        .state
        .library
        .passage(chunk_id, FETCH_NEIGHBOURS, |collection| {
            readable.can_read(collection)
        })
        .await?;
    let Some((document, chunks)) = found else {
        return Ok(absent());
    };
    let Some(focus) = chunks.iter().find(|chunk| chunk.id == chunk_id) else {
        return Ok(absent());
    };
    let collection = crate::db::documents::collection_names(
        &mut *context.state.pool.get().await?,
        &[document.id],
    )
    .await?
    .remove(&document.id)
    .unwrap_or_default();
    let passage = Passage {
        id: chunk_id.to_string(),
        url: context.passage_url(document.id, chunk_id),
        text: chunks
            .iter()
            .map(|chunk| chunk.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n"),
        metadata: PassageMetadata {
            document_id: document.id,
            collection,
            source: document
                .source
                .map(|source| source_shown_to(context.caller, source)),
            heading: focus.heading.clone(),
            page: focus.page,
            passages: chunks.iter().map(|chunk| chunk.id).collect(),
        },
        title: document.title,
    };
    Ok(Outcome::Done(json!(passage)))
}

#[derive(Serialize)]
struct CollectionList {
    collections: Vec<CollectionEntry>,
}

#[derive(Serialize)]
struct CollectionEntry {
    name: String,
    description: String,
    documents: i64,
}

async fn list_collections(context: &Context<'_>) -> Result<Outcome, ApiError> {
    let summaries = collections::summaries(&mut *context.state.pool.get().await?).await?;
    let collections = summaries
        .into_iter()
        .filter(|summary| context.caller.readable.can_read(summary.collection.id))
        .map(|summary| CollectionEntry {
            name: summary.collection.name,
            description: summary.collection.description,
            documents: summary.documents,
        })
        .collect();
    Ok(Outcome::Done(json!(CollectionList { collections })))
}
