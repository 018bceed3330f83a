//! Errors of the `/v1` routes in the OpenAI error shape. A refusal keeps the status,
//! headers and `code` it has on bor's own API; a turn that failed without streaming
//! becomes a 5xx with the copy of its `error` frame.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use bor_actors::record::ErrorCode;

use super::wire::OpenAiErrorBody;
use crate::http::error::ApiError;

#[derive(Debug, thiserror::Error)]
pub enum OpenAiError {
    #[error(transparent)]
    Refused(#[from] ApiError),
    /// The turn ended in an `error` frame (`stream: false`).
    #[error("the turn failed: {0}")]
    TurnFailed(ErrorCode),
}

/// The `type` of an error object with this status.
pub fn error_type(status: StatusCode) -> &'static str {
    if status.is_server_error() {
        "server_error"
    } else {
        "invalid_request_error"
    }
}

/// The status of a failed turn: the model server did not answer (503), answered
/// wrongly (502), or bor failed (500).
pub fn turn_failure_status(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::LlmUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::LlmInterrupted | ErrorCode::LlmRejected | ErrorCode::MalformedReply => {
            StatusCode::BAD_GATEWAY
        }
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The error object of a failed turn, as a stream's last event or a response body.
pub fn turn_failure_body(code: ErrorCode) -> OpenAiErrorBody {
    OpenAiErrorBody::new("server_error", code.as_str(), code.detail().to_owned())
}

impl ResponseError for OpenAiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Refused(error) => error.status_code(),
            Self::TurnFailed(code) => turn_failure_status(*code),
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Self::Refused(error) => error.response_head().json(OpenAiErrorBody::new(
                error_type(error.status_code()),
                error.code(),
                error.public_message(),
            )),
            Self::TurnFailed(code) => {
                HttpResponse::build(self.status_code()).json(turn_failure_body(*code))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::to_bytes;
    use actix_web::http::header;
    use serde_json::{Value, json};

    async fn response(error: OpenAiError) -> (u16, Option<String>, Value) {
        let response = error.error_response();
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(header::RETRY_AFTER)
            .map(|value| value.to_str().unwrap().to_owned());
        let bytes = to_bytes(response.into_body()).await.unwrap();
        (status, retry_after, serde_json::from_slice(&bytes).unwrap())
    }

    #[actix_web::test]
    async fn refusals_keep_their_status_headers_and_code() {
        let (status, retry_after, body) = response(ApiError::Busy.into()).await;
        assert_eq!((status, retry_after.as_deref()), (503, Some("1")));
        assert_eq!(body["error"]["code"], "busy");
        assert_eq!(body["error"]["type"], "server_error");
        assert_eq!(body["error"]["param"], Value::Null);

        let (status, _, body) = response(ApiError::EmptyMessage.into()).await;
        assert_eq!(status, 400);
        assert_eq!(
            body,
            json!({"error": {"message": "the message is empty", "type": "invalid_request_error",
                             "param": null, "code": "empty_message"}})
        );
        let (status, _, body) = response(ApiError::Internal("secret cause".into()).into()).await;
        assert_eq!(status, 500);
        assert!(!body.to_string().contains("secret cause"));
    }

    #[actix_web::test]
    async fn failed_turns_have_their_status_and_copy() {
        let cases = [
            (ErrorCode::LlmUnavailable, 503),
            (ErrorCode::LlmInterrupted, 502),
            (ErrorCode::LlmRejected, 502),
            (ErrorCode::MalformedReply, 502),
            (ErrorCode::Internal, 500),
        ];
        for (code, status) in cases {
            let (got, _, body) = response(OpenAiError::TurnFailed(code)).await;
            assert_eq!(got, status, "{code}");
            assert_eq!(
                body,
                json!({"error": {"message": code.detail(), "type": "server_error",
                                 "param": null, "code": code.as_str()}})
            );
        }
    }

    /// docs/OPENAI.md's table of errors lists exactly the codes `/v1` sends, each with
    /// its status: refusals as on bor's own API, failed turns as [`turn_failure_status`].
    #[test]
    fn the_openai_errors_table_lists_every_code_v1_sends_and_no_other() {
        use crate::http::error::tests::{documented_codes, one_of_each, turn_error_codes};
        use std::collections::BTreeSet;

        // Refusals of bor's own routes only: conversations, exports, feedback, sign-in, keys,
        // collections, the admin API and versions of a turn.
        let not_on_v1 = [
            "turn_running",
            "not_last_turn",
            "invalid_conversation",
            "invalid_title",
            "invalid_feedback",
            "invalid_format",
            "admin_disabled",
            "invalid_credentials",
            "too_many_attempts",
            "invalid_password",
            "invalid_username",
            "invalid_name",
            "forbidden",
            "username_taken",
            "last_admin",
            "invalid_collection",
            "name_taken",
            "built_in",
            "unknown_name",
        ];
        let mut sent: BTreeSet<(String, String)> = one_of_each()
            .into_iter()
            .filter(|(_, _, code)| !not_on_v1.contains(code))
            .map(|(_, status, code)| (code.to_owned(), status.to_string()))
            .collect();
        sent.extend(turn_error_codes().into_iter().map(|code| {
            (
                code.as_str().to_owned(),
                turn_failure_status(code).as_u16().to_string(),
            )
        }));
        let documented = documented_codes(include_str!("../../../docs/OPENAI.md"), "Errors", 1, 0);
        assert_eq!(documented, sent, "docs/OPENAI.md, \"Errors\"");
    }
}
