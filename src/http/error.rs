//! The API's errors: one table from error to HTTP status and stable `code`, and the
//! JSON shape `{"error":{"code","message"}}` (docs/PROTOCOL.md, "Errors" and "Error
//! codes"). Unexpected errors are 500s with an opaque message; their cause goes to the
//! log.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, HttpResponseBuilder, ResponseError};
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::access::Refusal;
use crate::auth::people::PeopleError;

/// Seconds a client is asked to wait when all turn slots are taken.
pub const BUSY_RETRY_AFTER_SECS: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    InvalidJson(String),
    #[error("{0}")]
    InvalidHistory(String),
    #[error("{0}")]
    InvalidConversation(String),
    #[error("{0}")]
    InvalidTitle(String),
    #[error("{0}")]
    InvalidFormat(String),
    /// A rating, or passages named for a rated turn, that do not fit (docs/PROTOCOL.md,
    /// "Feedback").
    #[error("{0}")]
    InvalidFeedback(String),
    /// U+0000 in a body's text, the path or the query: PostgreSQL stores no such
    /// character, and no name or text of bor's holds one.
    #[error("U+0000 (NUL) is not accepted in {0}")]
    NulCharacter(&'static str),
    #[error("the message is empty")]
    EmptyMessage,
    #[error("the message is longer than {max} characters")]
    MessageTooLong { max: usize },
    #[error("the request body must be JSON (Content-Type: application/json)")]
    UnsupportedMediaType,
    #[error("the request body is larger than {max_bytes} bytes")]
    BodyTooLarge { max_bytes: usize },
    #[error("the request body did not arrive within {seconds} s")]
    BodyTimeout { seconds: f64 },
    #[error("a valid admin token is required (Authorization: Bearer …)")]
    Unauthorized,
    /// No caller (`BOR_AUTH=accounts`): not signed in, or a key or session that is
    /// not (or no longer) valid.
    #[error("sign in first, or send an API key (Authorization: Bearer bor_…)")]
    NotSignedIn,
    #[error("wrong username or password")]
    InvalidCredentials,
    #[error("too many failed sign-ins; try again in {retry_after_secs} s")]
    TooManyAttempts { retry_after_secs: u64 },
    #[error("{0}")]
    InvalidPassword(String),
    #[error("{0}")]
    InvalidUsername(String),
    #[error("{0}")]
    InvalidName(String),
    #[error("this needs an admin")]
    Forbidden,
    /// A collection or document the caller may read but not change.
    #[error("{0}")]
    NotWritable(String),
    #[error(
        "a change signed in by cookie, and every request to /mcp from a web page, must come from bor's own pages (Origin or Referer)"
    )]
    ForbiddenOrigin,
    #[error("that username is taken")]
    UsernameTaken,
    #[error("{0}")]
    InvalidCollection(String),
    /// A collection or group of that name exists.
    #[error("{0}")]
    NameTaken(String),
    /// The built-in group `everyone` cannot be changed or deleted.
    #[error("{0}")]
    BuiltIn(String),
    /// A grant or a member list names a user or group that does not exist.
    #[error("{0}")]
    UnknownName(String),
    #[error("bor needs an admin who is not disabled: make another admin first")]
    LastAdmin,
    /// A version of a turn that is still running (docs/PROTOCOL.md, "Versions of a
    /// turn").
    #[error("this turn is still running: stop it or wait for its end before asking it again")]
    TurnRunning,
    /// A version of a turn that is not its conversation's last.
    #[error("only the conversation's last turn can be asked again")]
    NotLastTurn,
    #[error("the admin API is disabled: set BOR_ADMIN_TOKEN to enable it")]
    AdminDisabled,
    #[error("{0}")]
    NotFound(String),
    /// A header that must come once came more than once (`X-Forwarded-For` from a
    /// trusted proxy).
    #[error("{0} came more than once; a proxy must send one")]
    RepeatedHeader(&'static str),
    /// The request names a host bor is not reached by (docs/PROTOCOL.md, "Hosts").
    #[error("{0}")]
    MisdirectedHost(String),
    #[error("the service is at capacity; try again shortly")]
    Busy,
    /// A limit on the asker's turns or tokens is reached (docs/LIMITS.md, "Limits").
    #[error("{0}")]
    QuotaExceeded(Box<crate::usage::QuotaExceeded>),
    /// The cause is logged with its whole chain, never shown.
    #[error("a dependency is unavailable")]
    Unavailable(#[source] Cause),
    /// The service is stopping and takes no new turns.
    #[error("bor is shutting down and takes no new chat turns — please try again in a moment.")]
    ShuttingDown,
    /// The cause is logged with its whole chain, never shown.
    #[error("internal error")]
    Internal(#[source] Cause),
}

impl From<PeopleError> for ApiError {
    fn from(error: PeopleError) -> Self {
        match error {
            PeopleError::InvalidUsername | PeopleError::InvalidDisplayName => {
                ApiError::InvalidUsername(error.to_string())
            }
            PeopleError::InvalidPassword(message) => ApiError::InvalidPassword(message),
            PeopleError::UsernameTaken => ApiError::UsernameTaken,
            PeopleError::NotFound => ApiError::NotFound("no such user".to_owned()),
            PeopleError::LastAdmin => ApiError::LastAdmin,
            PeopleError::WrongCredentials { .. } => ApiError::InvalidCredentials,
            PeopleError::TooManyAttempts { retry_after_secs } => {
                ApiError::TooManyAttempts { retry_after_secs }
            }
            PeopleError::Internal { doing, cause } => ApiError::internal(doing, cause),
            PeopleError::Db(error) => error.into(),
        }
    }
}

/// What went wrong behind an [`ApiError::Internal`] or [`ApiError::Unavailable`], kept
/// whole so that the log shows its chain of sources.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// A cause with what was being done when it happened.
#[derive(Debug, thiserror::Error)]
#[error("{doing}")]
pub struct Failed {
    doing: &'static str,
    #[source]
    cause: Cause,
}

impl ApiError {
    /// A 500 whose log line says what was being done and why it failed.
    pub fn internal(doing: &'static str, cause: impl Into<Cause>) -> ApiError {
        ApiError::Internal(Box::new(Failed {
            doing,
            cause: cause.into(),
        }))
    }

    /// A 503 whose log line says what was being done and why it failed.
    pub fn unavailable(doing: &'static str, cause: impl Into<Cause>) -> ApiError {
        ApiError::Unavailable(Box::new(Failed {
            doing,
            cause: cause.into(),
        }))
    }

    /// An embedding request's failure: the server refusing bor's own request is bor's
    /// fault (500), anything else a dependency down (503).
    pub fn embedding(error: bor_actors::llm::LlmError) -> ApiError {
        match error {
            bor_actors::llm::LlmError::Rejected(_) => ApiError::internal("embedding", error),
            other => ApiError::unavailable("embedding", other),
        }
    }
}

/// The access rules' refusals, as `/api` answers them: what the caller cannot read is
/// `not_found`, worded as for what does not exist.
impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::NoCollection(name) => ApiError::NotFound(format!("no collection {name}")),
            Refusal::NoConversation(id) => ApiError::NotFound(format!("no conversation {id}")),
            Refusal::NoTurn(id) => ApiError::NotFound(format!("no turn {id}")),
            Refusal::ReadOnly(name) => ApiError::NotWritable(format!(
                "the collection {name} can be read, not written, by you"
            )),
        }
    }
}

/// A database failure: 503 `unavailable` when the database is down or overloaded,
/// else a 500 whose cause goes to the log.
impl From<crate::db::DbError> for ApiError {
    fn from(error: crate::db::DbError) -> Self {
        if error.is_unavailable() {
            ApiError::Unavailable(Box::new(error))
        } else {
            ApiError::Internal(Box::new(error))
        }
    }
}

impl ApiError {
    /// The one table of the API's errors: each one's stable `code` and HTTP status
    /// (docs/PROTOCOL.md lists them for clients).
    fn code_and_status(&self) -> (&'static str, StatusCode) {
        match self {
            Self::InvalidJson(_) => ("invalid_json", StatusCode::BAD_REQUEST),
            Self::InvalidHistory(_) => ("invalid_history", StatusCode::BAD_REQUEST),
            Self::InvalidConversation(_) => ("invalid_conversation", StatusCode::BAD_REQUEST),
            Self::InvalidTitle(_) => ("invalid_title", StatusCode::BAD_REQUEST),
            Self::InvalidFeedback(_) => ("invalid_feedback", StatusCode::BAD_REQUEST),
            Self::InvalidFormat(_) => ("invalid_format", StatusCode::BAD_REQUEST),
            Self::NulCharacter(_) => ("invalid_text", StatusCode::BAD_REQUEST),
            Self::RepeatedHeader(_) => ("repeated_header", StatusCode::BAD_REQUEST),
            Self::EmptyMessage => ("empty_message", StatusCode::BAD_REQUEST),
            Self::MessageTooLong { .. } => ("message_too_long", StatusCode::BAD_REQUEST),
            Self::UnsupportedMediaType => {
                ("unsupported_media_type", StatusCode::UNSUPPORTED_MEDIA_TYPE)
            }
            Self::BodyTooLarge { .. } => ("body_too_large", StatusCode::PAYLOAD_TOO_LARGE),
            Self::BodyTimeout { .. } => ("body_timeout", StatusCode::REQUEST_TIMEOUT),
            Self::Unauthorized | Self::NotSignedIn => ("unauthorized", StatusCode::UNAUTHORIZED),
            Self::InvalidCredentials => ("invalid_credentials", StatusCode::UNAUTHORIZED),
            Self::TooManyAttempts { .. } => ("too_many_attempts", StatusCode::TOO_MANY_REQUESTS),
            Self::InvalidPassword(_) => ("invalid_password", StatusCode::BAD_REQUEST),
            Self::InvalidUsername(_) => ("invalid_username", StatusCode::BAD_REQUEST),
            Self::InvalidName(_) => ("invalid_name", StatusCode::BAD_REQUEST),
            Self::Forbidden | Self::NotWritable(_) => ("forbidden", StatusCode::FORBIDDEN),
            Self::ForbiddenOrigin => ("forbidden_origin", StatusCode::FORBIDDEN),
            Self::UsernameTaken => ("username_taken", StatusCode::CONFLICT),
            Self::InvalidCollection(_) => ("invalid_collection", StatusCode::BAD_REQUEST),
            Self::NameTaken(_) => ("name_taken", StatusCode::CONFLICT),
            Self::BuiltIn(_) => ("built_in", StatusCode::CONFLICT),
            Self::UnknownName(_) => ("unknown_name", StatusCode::BAD_REQUEST),
            Self::LastAdmin => ("last_admin", StatusCode::CONFLICT),
            Self::TurnRunning => ("turn_running", StatusCode::CONFLICT),
            Self::NotLastTurn => ("not_last_turn", StatusCode::CONFLICT),
            Self::AdminDisabled => ("admin_disabled", StatusCode::FORBIDDEN),
            Self::NotFound(_) => ("not_found", StatusCode::NOT_FOUND),
            Self::MisdirectedHost(_) => ("misdirected_host", StatusCode::MISDIRECTED_REQUEST),
            Self::Busy => ("busy", StatusCode::SERVICE_UNAVAILABLE),
            Self::QuotaExceeded(_) => ("quota_exceeded", StatusCode::TOO_MANY_REQUESTS),
            Self::Unavailable(_) | Self::ShuttingDown => {
                ("unavailable", StatusCode::SERVICE_UNAVAILABLE)
            }
            Self::Internal(_) => ("internal", StatusCode::INTERNAL_SERVER_ERROR),
        }
    }

    /// The stable `code` of the JSON body.
    pub fn code(&self) -> &'static str {
        self.code_and_status().0
    }

    /// The cause of a 500 or 503 with its whole chain of sources, for the log; empty
    /// for every other error, whose message says it all.
    fn hidden_cause(&self) -> String {
        match self {
            Self::Internal(cause) | Self::Unavailable(cause) => {
                bor_actors::error_chain(cause.as_ref())
            }
            _ => String::new(),
        }
    }

    /// Logs the cause of a 500 or 503 with its chain (nothing for the other errors):
    /// once, where the error is answered.
    pub(super) fn log_hidden_cause(&self) {
        match self {
            Self::Internal(_) => tracing::error!(cause = self.hidden_cause(), "internal error"),
            Self::Unavailable(_) => {
                tracing::warn!(cause = self.hidden_cause(), "dependency unavailable");
            }
            _ => {}
        }
    }

    /// What the client reads: the error itself, except for 500s and 503s whose cause
    /// may name internals.
    pub(super) fn public_message(&self) -> String {
        match self {
            Self::Internal(_) => "Something went wrong on our side — please try again.".to_owned(),
            Self::Unavailable(_) => {
                "A service bor depends on is unavailable — please try again in a moment.".to_owned()
            }
            other => other.to_string(),
        }
    }
}

/// The body of every refusal and error.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Serialize, ToSchema)]
struct ErrorDetail {
    /// Stable; every code with its status is listed in docs/PROTOCOL.md.
    #[schema(value_type = String, example = "busy")]
    code: &'static str,
    /// For people; may change.
    message: String,
    /// `quota_exceeded`: the limit reached and when it resets.
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<crate::usage::QuotaExceeded>,
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.code_and_status().1
    }

    fn error_response(&self) -> HttpResponse {
        self.response_head().json(ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                message: self.public_message(),
                limit: match self {
                    Self::QuotaExceeded(reached) => Some((**reached).clone()),
                    _ => None,
                },
            },
        })
    }
}

impl ApiError {
    /// The response without its body: the status and the headers that go with it
    /// (`Retry-After`, `WWW-Authenticate`); a hidden cause is logged here. Each edge
    /// adds the body in its own error shape.
    pub(super) fn response_head(&self) -> HttpResponseBuilder {
        self.log_hidden_cause();
        let mut response = HttpResponse::build(self.status_code());
        match self {
            Self::Busy => {
                response.insert_header((header::RETRY_AFTER, BUSY_RETRY_AFTER_SECS));
            }
            Self::Unauthorized | Self::NotSignedIn => {
                response
                    .insert_header((header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer")));
            }
            Self::TooManyAttempts { retry_after_secs } => {
                response.insert_header((header::RETRY_AFTER, *retry_after_secs));
            }
            Self::QuotaExceeded(reached) => {
                response.insert_header((header::RETRY_AFTER, reached.retry_after_secs));
            }
            _ => {}
        }
        response
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use actix_web::body::to_bytes;
    use bor_actors::record::ErrorCode;

    async fn body(error: ApiError) -> (StatusCode, serde_json::Value) {
        let response = error.error_response();
        let status = response.status();
        let bytes = to_bytes(response.into_body()).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    /// One error of each kind, with its status and code.
    pub(crate) fn one_of_each() -> Vec<(ApiError, u16, &'static str)> {
        let cases = vec![
            (ApiError::InvalidJson("x".into()), 400, "invalid_json"),
            (ApiError::InvalidHistory("x".into()), 400, "invalid_history"),
            (ApiError::EmptyMessage, 400, "empty_message"),
            (
                ApiError::InvalidConversation("x".into()),
                400,
                "invalid_conversation",
            ),
            (ApiError::InvalidTitle("x".into()), 400, "invalid_title"),
            (
                ApiError::InvalidFeedback("x".into()),
                400,
                "invalid_feedback",
            ),
            (
                ApiError::InvalidCollection("x".into()),
                400,
                "invalid_collection",
            ),
            (ApiError::NameTaken("x".into()), 409, "name_taken"),
            (ApiError::BuiltIn("x".into()), 409, "built_in"),
            (ApiError::NotWritable("x".into()), 403, "forbidden"),
            (ApiError::UnknownName("x".into()), 400, "unknown_name"),
            (ApiError::InvalidFormat("x".into()), 400, "invalid_format"),
            (ApiError::NulCharacter("the body"), 400, "invalid_text"),
            (
                ApiError::RepeatedHeader("X-Forwarded-For"),
                400,
                "repeated_header",
            ),
            (ApiError::MessageTooLong { max: 5 }, 400, "message_too_long"),
            (
                ApiError::UnsupportedMediaType,
                415,
                "unsupported_media_type",
            ),
            (
                ApiError::BodyTooLarge { max_bytes: 5 },
                413,
                "body_too_large",
            ),
            (ApiError::BodyTimeout { seconds: 30.0 }, 408, "body_timeout"),
            (ApiError::Unauthorized, 401, "unauthorized"),
            (ApiError::NotSignedIn, 401, "unauthorized"),
            (ApiError::InvalidCredentials, 401, "invalid_credentials"),
            (
                ApiError::TooManyAttempts {
                    retry_after_secs: 9,
                },
                429,
                "too_many_attempts",
            ),
            (
                ApiError::InvalidPassword("x".into()),
                400,
                "invalid_password",
            ),
            (
                ApiError::InvalidUsername("x".into()),
                400,
                "invalid_username",
            ),
            (ApiError::InvalidName("x".into()), 400, "invalid_name"),
            (ApiError::Forbidden, 403, "forbidden"),
            (ApiError::ForbiddenOrigin, 403, "forbidden_origin"),
            (ApiError::UsernameTaken, 409, "username_taken"),
            (ApiError::LastAdmin, 409, "last_admin"),
            (ApiError::TurnRunning, 409, "turn_running"),
            (ApiError::NotLastTurn, 409, "not_last_turn"),
            (ApiError::AdminDisabled, 403, "admin_disabled"),
            (ApiError::NotFound("x".into()), 404, "not_found"),
            (
                ApiError::MisdirectedHost("x".into()),
                421,
                "misdirected_host",
            ),
            (ApiError::Busy, 503, "busy"),
            (
                ApiError::QuotaExceeded(Box::new(crate::usage::QuotaExceeded {
                    subject: "user",
                    name: "ann".into(),
                    measure: crate::usage::Measure::TurnsPerDay,
                    limit: 3,
                    used: 3,
                    resets_at: chrono::DateTime::UNIX_EPOCH,
                    retry_after_secs: 60,
                })),
                429,
                "quota_exceeded",
            ),
            (ApiError::Unavailable("db".into()), 503, "unavailable"),
            (ApiError::ShuttingDown, 503, "unavailable"),
            (ApiError::Internal("x".into()), 500, "internal"),
        ];
        // Each variant's place in the list above: a variant added to `ApiError` fails
        // to compile here until it is listed.
        let listed: BTreeSet<usize> = cases
            .iter()
            .map(|(error, ..)| match error {
                ApiError::InvalidJson(_) => 0,
                ApiError::InvalidHistory(_) => 1,
                ApiError::EmptyMessage => 2,
                ApiError::InvalidConversation(_) => 3,
                ApiError::InvalidTitle(_) => 4,
                ApiError::InvalidFormat(_) => 5,
                ApiError::MessageTooLong { .. } => 6,
                ApiError::UnsupportedMediaType => 7,
                ApiError::BodyTooLarge { .. } => 8,
                ApiError::BodyTimeout { .. } => 9,
                ApiError::Unauthorized => 10,
                ApiError::AdminDisabled => 11,
                ApiError::NotFound(_) => 12,
                ApiError::MisdirectedHost(_) => 13,
                ApiError::Busy => 14,
                ApiError::Unavailable(_) => 15,
                ApiError::ShuttingDown => 16,
                ApiError::Internal(_) => 17,
                ApiError::NotSignedIn => 18,
                ApiError::InvalidCredentials => 19,
                ApiError::TooManyAttempts { .. } => 20,
                ApiError::InvalidPassword(_) => 21,
                ApiError::InvalidUsername(_) => 22,
                ApiError::InvalidName(_) => 23,
                ApiError::Forbidden => 24,
                ApiError::ForbiddenOrigin => 25,
                ApiError::UsernameTaken => 26,
                ApiError::LastAdmin => 27,
                ApiError::InvalidCollection(_) => 28,
                ApiError::NameTaken(_) => 29,
                ApiError::BuiltIn(_) => 30,
                ApiError::UnknownName(_) => 31,
                ApiError::NotWritable(_) => 32,
                ApiError::NulCharacter(_) => 33,
                ApiError::InvalidFeedback(_) => 34,
                ApiError::QuotaExceeded(_) => 35,
                ApiError::TurnRunning => 36,
                ApiError::NotLastTurn => 37,
                ApiError::RepeatedHeader(_) => 38,
            })
            .collect();
        assert_eq!(listed, (0..=38).collect(), "every variant is listed once");
        cases
    }

    /// Every failure code of a turn's `error` frame (the enum's schema lists them all).
    pub(crate) fn turn_error_codes() -> Vec<ErrorCode> {
        let codes = vec![
            ErrorCode::LlmUnavailable,
            ErrorCode::LlmInterrupted,
            ErrorCode::LlmRejected,
            ErrorCode::MalformedReply,
            ErrorCode::Internal,
        ];
        let schema = serde_json::to_value(<ErrorCode as utoipa::PartialSchema>::schema()).unwrap();
        let names: Vec<&str> = codes.iter().map(|code| code.as_str()).collect();
        assert_eq!(
            schema["enum"],
            serde_json::json!(names),
            "every code is listed"
        );
        codes
    }

    /// The rows of the first table after the heading `heading` in `doc`, without its
    /// head: each row's cells, trimmed.
    fn table_after(doc: &str, heading: &str) -> Vec<Vec<String>> {
        let start = doc
            .lines()
            .position(|line| {
                line.trim_start_matches('#').trim() == heading && line.starts_with('#')
            })
            .unwrap_or_else(|| panic!("no heading {heading:?}"));
        doc.lines()
            .skip(start + 1)
            .skip_while(|line| !line.starts_with('|'))
            .take_while(|line| line.starts_with('|'))
            .skip(2)
            .map(|line| {
                line.trim_matches('|')
                    .split(" | ")
                    .map(|cell| cell.trim().to_owned())
                    .collect()
            })
            .collect()
    }

    /// The codes a cell names: its words in backticks.
    fn codes_in(cell: &str) -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .filter(|word| word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
            .map(str::to_owned)
            .collect()
    }

    /// The codes the table after `heading` names in its column `code_column`, each with
    /// the cell of its row in column `with_column` (a status, a copy).
    pub(crate) fn documented_codes(
        doc: &str,
        heading: &str,
        code_column: usize,
        with_column: usize,
    ) -> BTreeSet<(String, String)> {
        table_after(doc, heading)
            .iter()
            .flat_map(|row| {
                codes_in(&row[code_column])
                    .into_iter()
                    .map(|code| (code, row[with_column].clone()))
            })
            .collect()
    }

    #[actix_web::test]
    async fn every_error_has_its_status_and_code() {
        for (error, status, code) in one_of_each() {
            let (got_status, json) = body(error).await;
            assert_eq!(got_status.as_u16(), status);
            assert_eq!(json["error"]["code"], code);
            assert!(
                json["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
        }
    }

    /// docs/PROTOCOL.md's tables of codes list exactly the codes bor sends, each with
    /// its status (refusals) or its copy (turn errors).
    #[test]
    fn the_protocol_lists_every_code_bor_sends_and_no_other() {
        let protocol = include_str!("../../docs/PROTOCOL.md");
        let documented = documented_codes(protocol, "Error codes", 0, 1);
        let sent: BTreeSet<(String, String)> = one_of_each()
            .into_iter()
            .map(|(_, status, code)| (code.to_owned(), status.to_string()))
            .collect();
        assert_eq!(documented, sent, "docs/PROTOCOL.md, \"Error codes\"");

        let documented = documented_codes(protocol, "Turn error codes", 0, 1);
        let sent: BTreeSet<(String, String)> = turn_error_codes()
            .into_iter()
            .map(|code| (code.as_str().to_owned(), code.detail().to_owned()))
            .collect();
        assert_eq!(documented, sent, "docs/PROTOCOL.md, \"Turn error codes\"");
    }

    #[actix_web::test]
    async fn internal_causes_are_not_shown() {
        let (_, json) = body(ApiError::Internal("password=hunter2 at db.rs:12".into())).await;
        assert!(!json.to_string().contains("hunter2"));
        let (_, json) = body(ApiError::Unavailable("connect to 10.0.0.5 failed".into())).await;
        assert!(!json.to_string().contains("10.0.0.5"));
    }

    /// The log line of a 500 or 503 names what was being done and every source below.
    #[test]
    fn hidden_causes_keep_their_chain() {
        let query = || crate::db::DbError::Query(diesel::result::Error::NotFound);
        assert_eq!(
            ApiError::internal("exporting a conversation", query()).hidden_cause(),
            "exporting a conversation: database query failed: Record not found"
        );
        assert_eq!(
            ApiError::from(query()).hidden_cause(),
            "database query failed: Record not found"
        );
        let refused = bor_actors::llm::LlmError::Rejected(bor_actors::llm::AttemptError::Status {
            status: 400,
            body: "bad model".to_owned(),
        });
        let error = ApiError::embedding(refused);
        assert_eq!(error.code(), "internal");
        assert!(
            error
                .hidden_cause()
                .starts_with("embedding: the LLM server rejected")
        );
    }

    #[actix_web::test]
    async fn busy_says_when_to_retry() {
        let response = ApiError::Busy.error_response();
        assert_eq!(
            response.headers().get(header::RETRY_AFTER).unwrap(),
            &BUSY_RETRY_AFTER_SECS.to_string()
        );
    }
}
