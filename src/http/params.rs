//! Query parameters the list routes share (`since`, `until`, `limit`), each read the
//! same way and refused as `invalid_json` in the same words.

use chrono::{DateTime, Utc};

use super::error::ApiError;

/// A time given as RFC 3339, if given.
pub(super) fn moment(name: &str, value: Option<&str>) -> Result<Option<DateTime<Utc>>, ApiError> {
    value
        .map(|value| {
            DateTime::parse_from_rfc3339(value)
                .map(|moment| moment.with_timezone(&Utc))
                .map_err(|_| ApiError::InvalidJson(format!("`{name}` must be an RFC 3339 time")))
        })
        .transpose()
}

/// `limit`, from 1 to `max`; `default` when not given.
pub(super) fn limit(value: Option<&str>, default: i64, max: i64) -> Result<i64, ApiError> {
    match value {
        None => Ok(default),
        Some(value) => value
            .parse::<i64>()
            .ok()
            .filter(|limit| (1..=max).contains(limit))
            .ok_or_else(|| ApiError::InvalidJson(format!("`limit` must be from 1 to {max}"))),
    }
}
