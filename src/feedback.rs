//! Feedback on a turn (docs/PROTOCOL.md, "Feedback"): the asker's rating, a reason and
//! a comment, checked here once for every edge; the rows are in `db::feedback`, the
//! routes in `http::feedback`, the evaluation set it feeds in `eval::feedback`.
//!
//! A rating never changes ranking by itself (docs/RETRIEVAL.md, "Feedback"): it brings
//! a turn to the admins, who name the passages that should have been found; those
//! pairs are what retrieval is measured on.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The longest comment, in characters.
pub const MAX_COMMENT_CHARS: usize = 2_000;

/// Thumbs up or down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rating {
    Up,
    Down,
}

impl Rating {
    pub const ALL: [Rating; 2] = [Rating::Up, Rating::Down];

    pub fn as_str(self) -> &'static str {
        match self {
            Rating::Up => "up",
            Rating::Down => "down",
        }
    }
}

/// Why an answer was not good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The answer cites a passage that does not say it.
    WrongSource,
    /// The passage that says it was not found.
    MissingSource,
    /// It should have said it does not know.
    ShouldNotAnswer,
    WrongAnswer,
    Other,
}

impl Reason {
    pub const ALL: [Reason; 5] = [
        Reason::WrongSource,
        Reason::MissingSource,
        Reason::ShouldNotAnswer,
        Reason::WrongAnswer,
        Reason::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::WrongSource => "wrong_source",
            Reason::MissingSource => "missing_source",
            Reason::ShouldNotAnswer => "should_not_answer",
            Reason::WrongAnswer => "wrong_answer",
            Reason::Other => "other",
        }
    }
}

/// A rating as given: `PUT /api/turns/{turn_id}/feedback`'s body.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackBody {
    pub rating: Rating,
    /// Only with `down`.
    pub reason: Option<Reason>,
    /// At most 2,000 characters.
    pub comment: Option<String>,
}

/// A rating that passed [`FeedbackBody::checked`]: the comment trimmed (empty when none).
#[derive(Debug, Clone, PartialEq)]
pub struct Feedback {
    pub rating: Rating,
    pub reason: Option<Reason>,
    pub comment: String,
}

impl FeedbackBody {
    /// The rating as stored, or what is wrong with it.
    pub fn checked(self) -> Result<Feedback, String> {
        if self.rating == Rating::Up && self.reason.is_some() {
            return Err("a `reason` goes with the rating `down` only".to_owned());
        }
        let comment = self.comment.unwrap_or_default().trim().to_owned();
        if comment.chars().count() > MAX_COMMENT_CHARS {
            return Err(format!(
                "`comment` holds at most {MAX_COMMENT_CHARS} characters"
            ));
        }
        Ok(Feedback {
            rating: self.rating,
            reason: self.reason,
            comment,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(rating: Rating, reason: Option<Reason>, comment: Option<&str>) -> FeedbackBody {
        FeedbackBody {
            rating,
            reason,
            comment: comment.map(str::to_owned),
        }
    }

    #[test]
    fn a_reason_goes_with_a_thumbs_down_only() {
        assert!(
            body(Rating::Up, Some(Reason::Other), None)
                .checked()
                .is_err()
        );
        let down = body(Rating::Down, Some(Reason::MissingSource), None).checked();
        assert_eq!(down.map(|f| f.reason), Ok(Some(Reason::MissingSource)));
    }

    #[test]
    fn a_comment_is_trimmed_and_bounded_in_characters() {
        let kept = body(Rating::Up, None, Some("  thanks \n")).checked();
        assert_eq!(kept.map(|f| f.comment), Ok("thanks".to_owned()));
        let longest = "é".repeat(MAX_COMMENT_CHARS);
        assert!(body(Rating::Down, None, Some(&longest)).checked().is_ok());
        let longer = format!("{longest}x");
        assert!(body(Rating::Down, None, Some(&longer)).checked().is_err());
    }

    #[test]
    fn the_words_are_the_wire_words() {
        for rating in Rating::ALL {
            assert_eq!(
                serde_json::to_value(rating).ok(),
                Some(serde_json::json!(rating.as_str()))
            );
        }
        for reason in Reason::ALL {
            assert_eq!(
                serde_json::to_value(reason).ok(),
                Some(serde_json::json!(reason.as_str()))
            );
        }
    }
}
