//! The one way an error is written to a log or a report: with every cause.

/// The error's text followed by each of its causes, `: `-separated, so that what a
/// library said (diesel's, tantivy's, the LLM server's) is never dropped.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("the document could not be stored")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("connection refused")]
    struct Inner;

    #[test]
    fn every_cause_is_written_in_order() {
        assert_eq!(
            error_chain(&Outer(Inner)),
            "the document could not be stored: connection refused"
        );
        assert_eq!(error_chain(&Inner), "connection refused");
    }
}
